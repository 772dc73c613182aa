"""A draft file on its way into the gate: checked, taken for one gate by a rename, read,
or given back when it is not queued."""

from __future__ import annotations

import os
import stat

from swarmforge import filewrite, fsutil
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff.draft import MAX_BYTES, HandoffInvalid

TYPE_CHECKING = False  # typing itself costs milliseconds on the helpers' hot path
if TYPE_CHECKING:
    from typing import NoReturn

CLAIM_SUFFIX = ".queueing"  # .<draft>.<pid>.queueing: a draft a gate has taken


def _claim_name(path: str, pid: int) -> str:
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{pid}{CLAIM_SUFFIX}")


def claim(path: str, label: str) -> str:
    """Take the draft at `path` for this gate alone by renaming it; its new path.

    Two gates on one draft cannot both queue it: only one rename succeeds. And a gate
    killed after queueing leaves no draft at `path` to be sent a second time.
    """
    claimed = _claim_name(path, os.getpid())
    try:
        os.rename(path, claimed)
    except FileNotFoundError:
        _missing(path, label)
    return claimed


def unclaim(claimed: str, path: str) -> None:
    """Give a draft that was not queued back its name (kept as claimed if that is taken)."""
    try:
        filewrite.move_noreplace(claimed, path)
    except OSError:
        pass  # a new draft was written meanwhile: the claimed copy stays beside it


def _missing(path: str, label: str) -> NoReturn:
    """Refuse a draft that is not there, saying where another gate has it if one does."""
    head, tail = os.path.split(path)
    prefix = f".{tail}."
    try:
        names = [n for n in os.listdir(head or ".") if n.startswith(prefix)]
    except OSError:
        names = []
    for name in sorted(names):
        pid = name[len(prefix) : -len(CLAIM_SUFFIX)] if name.endswith(CLAIM_SUFFIX) else ""
        if not (pid.isascii() and pid.isdigit()):
            continue
        from swarmforge.proc import liveness  # only when a draft has gone missing

        if liveness.is_alive(int(pid)):
            raise SwarmforgeError(
                f"Draft file is being queued by another gate (pid {pid}): {label}"
            )
        if not os.path.lexists(os.path.join(head, name)):
            continue  # that gate finished between the listing and the look at its pid
        raise SwarmforgeError(
            f"Draft file not found: {label}",
            hint=f"A gate that was interrupted left it as {os.path.join(head, name)}; "
            "look in outbox/ and sent/ before queueing it again.",
        )
    raise SwarmforgeError(f"Draft file not found: {label}")


def check_draft_file(path: str, label: str) -> None:
    """Refuse a missing draft, and anything but a regular file, before reading it."""
    try:
        st = os.stat(path)
    except OSError:
        _missing(path, label)
    if not stat.S_ISREG(st.st_mode):
        raise SwarmforgeError(
            f"Draft file is {fsutil.kind_of(st.st_mode)}, not a regular file: {label}"
        )


def read_draft(path: str, label: str) -> bytes:
    """The draft's bytes, refusing a draft too large to be a few header lines unread."""
    try:
        # A draft may be a symbolic link to a file; never a FIFO, which would block.
        return fsutil.read_regular(path, limit=MAX_BYTES, follow=True)
    except fsutil.FileTooLarge as exc:
        raise HandoffInvalid(
            label,
            [
                f"The draft is {exc.size} bytes; a draft is a few header lines, "
                f"at most {MAX_BYTES} bytes."
            ],
        ) from None
    except fsutil.NotRegularFile as exc:
        raise SwarmforgeError(f"Draft file is {exc.kind}, not a regular file: {label}") from None
    except FileNotFoundError:
        raise SwarmforgeError(f"Draft file not found: {label}") from None
