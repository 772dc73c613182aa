"""Git repositories inside a directory: what neither a removal nor an artifact sweep may
delete, since their commits are in no repository of ours (`git clean -ndX` leaves them)."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge import statedir
from swarmforge.filewrite import move_noreplace
from swarmforge.layout import NESTED_KEPT
from swarmforge.times import compact

# At a worktree's top: its own `.git`, and swarmforge's state.
_TOP_OWN = frozenset({".git", ".swarmforge"})


def repositories_in(directory: str, *, is_checkout: bool = False) -> list[str]:
    """The directories at or below `directory` that hold a `.git` (a repository, or a
    linked worktree or submodule of one), relative to it ("." for itself), in walk order.

    Symlinks are never followed. With `is_checkout`, `directory` is a checkout's top: its
    own `.git` and `.swarmforge` do not count.
    """
    found = []
    for dirpath, dirnames, filenames in os.walk(directory):
        top = dirpath == directory
        names = set(dirnames) | set(filenames)
        if ".git" in names and not (top and is_checkout):
            found.append(os.path.relpath(dirpath, directory))
            dirnames[:] = []  # what is inside it is that repository's own
            continue
        if top and is_checkout:
            dirnames[:] = [d for d in dirnames if d not in _TOP_OWN]
    return found


def keep_aside(root: str, name: str, worktree: str) -> list[tuple[str, str]]:
    """Move every repository inside `worktree` (not the worktree's own) to
    `<root>/.swarmforge/nested-repositories/<name>-<stamp>/<where it was>`, before the
    worktree is removed; (where it was, where it went) for each."""
    inside = repositories_in(worktree, is_checkout=True)
    if not inside:
        return []
    base = Path(statedir.path(root, NESTED_KEPT), f"{name}-{compact(micro=True)}")
    moved = []
    for rel in inside:
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        move_noreplace(str(Path(worktree, rel)), str(target))
        moved.append((rel, str(target)))
    return moved


def put_back(worktree: str, moved: list[tuple[str, str]]) -> None:
    """Undo `keep_aside` (a removal that failed after it)."""
    for rel, target in reversed(moved):
        move_noreplace(target, str(Path(worktree, rel)))
