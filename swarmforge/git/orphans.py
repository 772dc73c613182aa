"""Keeping a worktree's pending mailbox items when the worktree is removed."""

from __future__ import annotations

import os
from pathlib import Path

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
    mailbox = Path(worktree, HANDOFFS)
    if not mailbox.is_dir() or not _holds_files(mailbox):
        return None
    parent = Path(root, ORPHANED_MAILBOXES)
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


def restore_mailbox(kept: str, worktree: str) -> None:
    """Put a mailbox moved away by `keep_mailbox` back into its worktree."""
    move_noreplace(kept, str(Path(worktree, HANDOFFS)))
