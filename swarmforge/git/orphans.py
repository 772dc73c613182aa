"""Keeping a worktree's pending mailbox items when the worktree is removed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from swarmforge import statedir
from swarmforge.filewrite import move_noreplace
from swarmforge.layout import HANDOFFS, ORPHANED_MAILBOXES
from swarmforge.times import compact


def _holds_files(directory: Path) -> bool:
    for dirpath, dirnames, filenames in os.walk(directory):
        # os.walk lists symlinks to directories among dirnames; they count as content.
        if filenames or any(Path(dirpath, d).is_symlink() for d in dirnames):
            return True
    return False


def keep_mailbox(root: str, name: str, worktree: str) -> str | None:
    """Move the worktree's mailbox to `<root>/.swarmforge/orphaned-mailboxes/<name>-<stamp>/`.

    Returns where it went, or None when it held nothing but empty directories.
    """
    mailbox = Path(statedir.path(worktree, HANDOFFS))
    if not mailbox.is_dir() or not _holds_files(mailbox):
        return None
    parent = Path(statedir.path(root, ORPHANED_MAILBOXES))
    parent.mkdir(parents=True, exist_ok=True)
    stamp = compact(micro=True)
    target = str(parent / f"{name}-{stamp}")
    for attempt in range(2, 100):
        try:
            move_noreplace(str(mailbox), target)
            return target
        except FileExistsError:
            target = str(parent / f"{name}-{stamp}-{attempt}")
    raise FileExistsError(target)


def drop_state(worktree: str) -> None:
    """Remove what is left of the state of a removed worktree (statedir.py), once its mailbox
    items were kept (`keep_mailbox`): empty directories only; anything else stays."""
    state = Path(statedir.of(worktree))
    if state.parent == Path(worktree) or not state.is_dir():
        return
    if any(p.name != statedir.VIEW_MADE for p in state.rglob("*") if not p.is_dir()):
        return
    shutil.rmtree(state, ignore_errors=True)


def restore_mailbox(kept: str, worktree: str) -> None:
    """Put a mailbox moved away by `keep_mailbox` back into its worktree."""
    move_noreplace(kept, statedir.path(worktree, HANDOFFS))
