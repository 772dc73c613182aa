"""A recipient's queue, `inbox/new/`: a copy published there, or taken back unread."""

from __future__ import annotations

from pathlib import Path

from swarmforge import filewrite, fsutil
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox


def deliver_copy(box: Mailbox, name: str, copy: message.Handoff) -> bool:
    """Daemon: publish `copy` as `name` in inbox/new/; False if one was there already.

    WorktreeGone (from `Mailbox.ensure`) when the recipient's worktree is gone.
    """
    box.check(Box.IN_PROCESS, Box.COMPLETED)
    return queue_copy(box, name, copy)


def queue_copy(box: Mailbox, name: str, copy: message.Handoff, into: str = Box.NEW) -> bool:
    """Publish `copy` as `name` in inbox/new/ (or `into` another box); False if one was there
    already.

    Written under a temporary name and linked in, so a reader never sees part of it.
    """
    box.ensure(into)
    final = box.path(into, name)
    tmp = filewrite.temp_name(final)
    filewrite.write_new(tmp, copy.render())
    made = filewrite.publish(tmp, final)
    fsutil.fsync_dir(box.path(into))
    return made


def take_back(path: str) -> bool:
    """Remove the queued copy at `path` unless someone took it first; True if removed.

    Renamed away before it is unlinked, so that of two takers only one removes it.
    """
    claim = filewrite.temp_name(path)
    try:
        Path(path).rename(claim)
    except FileNotFoundError:
        return False
    Path(claim).unlink()
    return True
