"""`gc --artifacts`: the sweep of every stopped role's worktree of the session."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.config import sessionrecord
from swarmforge.swarm.artifacts.busy import users
from swarmforge.swarm.artifacts.ignored import sweep_tree
from swarmforge.swarm.artifacts.report import Skipped, Sweep
from swarmforge.swarm.disk import Seen, in_main_checkout


def _stopped_trees(root: str) -> tuple[dict[str, str], list[Skipped]]:
    """The run's own worktrees (path: role) whose role is not running, and those left alone.

    A role is running when `status` says so: the same judgement `status` shows.
    """
    from swarmforge.swarm.status.summary import status

    record = sessionrecord.load(root)
    if record is None:
        return {}, []
    alive = {r.role for r in status(root).roles if r.alive}
    home = Path(root, ".worktrees")
    trees: dict[str, str] = {}
    running: list[Skipped] = []
    for role in record.roles:
        tree = Path(os.path.realpath(role.path))
        if in_main_checkout(root, role) or home not in tree.parents or not tree.is_dir():
            continue
        if role.name in alive:
            running.append(Skipped(role.name, str(tree), "the role is running"))
        else:
            trees.setdefault(str(tree), role.name)
    running_trees = {s.path for s in running}
    return {t: r for t, r in trees.items() if t not in running_trees}, running


def sweep(root: str, dry_run: bool = False) -> Sweep:
    """Remove the git-ignored files and directories of every stopped role's worktree.

    With `dry_run`, nothing is removed: the result names what would be.
    """
    root = os.path.realpath(root)
    found = Sweep(dry_run)
    trees, running = _stopped_trees(root)
    found.skipped.extend(running)
    busy = users(root, trees) if trees else {}
    seen: Seen = set()
    for tree, role in sorted(trees.items()):
        if tree in busy:
            found.skipped.append(Skipped(role, tree, busy[tree]))
        else:
            sweep_tree(role, tree, dry_run, seen, found)
    return found
