"""The sender's transitions: install a handoff in the outbox, archive it, set it aside."""

from __future__ import annotations

import os

from swarmforge import filewrite, fsutil, statedir, times
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, move


def sender(path: str) -> Mailbox:
    """The mailbox whose outbox holds `path` (`handoffs/outbox/X` in a checkout's state)."""
    top = statedir.checkout_of(path)
    if top is None:
        raise ValueError(f"{path} lies in no mailbox")
    return Mailbox(top)


def install(box: Mailbox, name: str, handoff: message.Handoff) -> str:
    """Gate: write `name` under outbox/tmp/ and rename it into outbox/; its final path."""
    box.ensure(Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED)
    # A temporary name carrying the writer's pid: the daemon sweeps it if the writer dies.
    tmp = filewrite.temp_name(box.path(Box.OUTBOX_TMP, name))
    final = box.path(Box.OUTBOX, name)
    try:
        filewrite.write_new(tmp, handoff.render())
        filewrite.move_noreplace(tmp, final)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    fsutil.fsync_dir(box.path(Box.OUTBOX))
    return final


def archive(box: Mailbox, path: str) -> None:
    """Daemon: move the delivered original at `path` from outbox/ to sent/.

    Raises FileExistsError if a handoff of that name was sent already.
    """
    box.ensure(Box.SENT)
    sent = box.path(Box.SENT)
    move(path, os.path.join(sent, os.path.basename(path)))


def set_aside(box: Mailbox, path: str, reason: str) -> str:
    """Move the handoff at `path` to failed/, beside a `<name>.error` saying why; its path.

    For a file that cannot be delivered or read: it keeps every byte, and no longer
    stands in the way of the files behind it.
    """
    box.ensure(Box.FAILED)
    failed = box.path(Box.FAILED)
    name = os.path.basename(path)
    target = os.path.join(failed, name)
    if os.path.lexists(target) or os.path.lexists(target + ".error"):
        target = os.path.join(failed, f"{name}.{times.stamp().replace(':', '')}")
    # The reason is written first: a crash before the move leaves the file to be
    # set aside again, never a failed file without its reason.
    filewrite.atomic_write(target + ".error", f"{reason}\n".encode())
    filewrite.move_noreplace(path, target)
    fsutil.fsync_dir(failed)
    return target
