"""Pruning a project's worktrees: stale registrations forgotten, crashed creations rolled
back, and directories that hold only what an interrupted creation leaves removed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from swarmforge.git import leftovers, repo
from swarmforge.git.command import git
from swarmforge.git.lock import git_lock
from swarmforge.git.project import find_project
from swarmforge.git.worktrees import Worktree, porcelain, recover_locked
from swarmforge.layout import WORKTREES_DIR


@dataclass(frozen=True)
class Pruned:
    """What `prune` cleared: stale registrations, creations rolled back after a crash, and
    directories under .worktrees/ that held only what an interrupted creation leaves."""

    worktrees: tuple[Worktree, ...]
    rolled_back: tuple[str, ...]
    cleared: tuple[str, ...]


def prune(root: str) -> Pruned:
    """Forget worktrees whose directory vanished, roll back creations that crashed, and
    remove directories under .worktrees/ that hold only what an interrupted creation leaves.

    Branches are kept: they may hold committed work. So is any directory that may hold work.
    """
    main = find_project(root)
    with git_lock(main.workdir):
        rolled_back = recover_locked(main)
        parent = Path(main.workdir, WORKTREES_DIR)
        # One of ours whose directory is gone is stale even when locked (by an add that
        # died, or by hand), which `git worktree prune` leaves.
        listed = porcelain(main.workdir)
        ours_gone = [
            wt
            for wt, _ in listed
            if Path(wt.path).parent == parent and not os.path.lexists(wt.path)
        ]
        stale = tuple(wt for wt, prunable in listed if prunable or wt in ours_gone)
        if stale:
            git(main.workdir, "worktree", "prune")
        for wt in ours_gone:
            leftovers.forget_locked(main, wt.path)
        cleared = tuple(_clear_leftovers_locked(main))
    return Pruned(stale, tuple(rolled_back), cleared)


def _clear_leftovers_locked(main: repo.MainRepo) -> list[str]:
    parent = Path(main.workdir, WORKTREES_DIR)
    try:
        names = sorted(entry.name for entry in parent.iterdir())
    except FileNotFoundError:
        return []
    cleared = []
    for name in names:
        entry = parent / name
        path = str(entry)
        if not entry.is_dir() or entry.is_symlink() or repo.open_checkout(path):
            continue
        if leftovers.work_held(main, path, ()) is None:
            leftovers.discard_locked(main, path)
            cleared.append(name)
    return cleared
