"""The worktrees some process still works in, which the sweep leaves alone."""

from __future__ import annotations

import os

import psutil

from swarmforge import tagging


def _exempt() -> set[int]:
    """This process and its ancestors: the user's shell may stand in a worktree."""
    me = psutil.Process()
    return {me.pid, *(p.pid for p in me.parents())}


def users(root: str, trees: dict[str, str]) -> dict[str, str]:
    """Worktrees some process still works in (by role tag or by its directory), and why.

    `trees` maps each worktree to its role. A server an agent left behind carries the
    role's tag; anything else standing in the worktree (a build started by hand) may be
    reading its output.
    """
    project = os.path.realpath(root)
    by_role = {role: tree for tree, role in trees.items()}
    busy: dict[str, str] = {}
    exempt = _exempt()
    for process in psutil.process_iter():
        if process.pid in exempt:
            continue
        try:
            env = process.environ()
            tree = by_role.get(env.get("SWARMFORGE_ROLE", ""))
            if env.get(tagging.PROJECT_TAG) != project or tree is None:
                tree = _containing(process.cwd(), trees)
            if tree is not None and process.status() != psutil.STATUS_ZOMBIE:
                busy.setdefault(tree, f"process {process.pid} ({process.name()}) works there")
        except psutil.Error:
            continue  # gone meanwhile, or not ours to read
    return busy


def _containing(directory: str, trees: dict[str, str]) -> str | None:
    """The worktree `directory` is in, if any."""
    return next((t for t in trees if directory == t or directory.startswith(t + os.sep)), None)
