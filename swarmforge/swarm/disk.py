"""The disk a role's worktree takes, counted the way `du` counts.

Sizes are what the disk gives the files (st_blocks): a symlink is counted as itself,
never what it points to (a `node_modules` linked to the main checkout's is not counted
twice), and a file with several hard links once.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from swarmforge.config.role import MAIN_CHECKOUT
from swarmforge.config.rolerecord import RoleRecord

Seen = set[tuple[int, int]]  # (device, inode) of hard-linked files already counted


def _counted(st: os.stat_result, seen: Seen) -> int:
    """The allocated bytes of one entry; 0 for a hard link already counted."""
    if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
        key = (st.st_dev, st.st_ino)
        if key in seen:
            return 0
        seen.add(key)
    return st.st_blocks * 512


def tree_bytes(top: str, seen: Seen | None = None, skip: frozenset[str] = frozenset()) -> int:
    """Allocated bytes of everything below directory `top`, in one pass of os.scandir.

    Symlinks are not followed; names in `skip` directly below `top` are left out. What
    vanishes or cannot be read meanwhile counts as nothing: a size is never worth an error.
    """
    seen = set() if seen is None else seen
    total = 0
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if directory == top and entry.name in skip:
                        continue
                    try:
                        total += _counted(entry.stat(follow_symlinks=False), seen)
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return total


def path_bytes(path: str | os.PathLike[str], seen: Seen | None = None) -> int:
    """Allocated bytes of a file, a symlink (itself) or a directory and everything in it."""
    seen = set() if seen is None else seen
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    own = _counted(st, seen)
    return own + tree_bytes(os.fspath(path), seen) if stat.S_ISDIR(st.st_mode) else own


def worktree_bytes(path: str) -> int | None:
    """The disk a role's worktree takes, its `.git` file aside; None when it is missing."""
    if not Path(path).is_dir():
        return None
    return tree_bytes(path, skip=frozenset({".git"}))


def in_main_checkout(root: str, role: RoleRecord) -> bool:
    """True for a role that works in the main checkout, which is the user's own."""
    return role.worktree in MAIN_CHECKOUT or os.path.realpath(role.path) == root


def readable(count: int | None) -> str:
    """Bytes as people read them: `1.2 GB` (powers of 1000), `-` when not measured."""
    if count is None:
        return "-"
    shown = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if shown < 1000:
            return f"{shown:.0f} {unit}" if unit == "B" else f"{shown:.1f} {unit}"
        shown /= 1000
    return f"{shown:.1f} TB"
