"""Per-worktree sequence numbers, allocated under a lock no dead process can keep."""

from __future__ import annotations

import os

from swarmforge import filewrite, fsutil, locks
from swarmforge.errors import CorruptFile

SEQUENCE = "sequence"
# A lock file beside the counter (locks.Exclusive: never replaced, released by the kernel
# when its holder dies). SwarmForge's own scripts use a `sequence.lock` directory; this
# name does not collide with it.
LOCK = "sequence.flock"
LOCK_TIMEOUT = 30.0
MAX_COUNTER_BYTES = 64  # six digits and a newline; room for more, never a whole file


def _not_regular(path: str, exc: fsutil.NotRegularFile) -> CorruptFile:
    return CorruptFile(
        path, None, f"is {exc.kind}, not a regular file; remove it to let the gate go on"
    )


class SequenceLock(locks.Exclusive):
    """An exclusive lock on the mailbox's sequence lock file, as a context manager."""

    def __init__(self, handoffs_root: str, timeout: float = LOCK_TIMEOUT) -> None:
        super().__init__(os.path.join(handoffs_root, LOCK), timeout=timeout, what="sequence lock")


def read_counter(path: str) -> int:
    """The last allocated number stored at `path` (0 if the file does not exist)."""
    try:
        raw = fsutil.read_regular(path, limit=MAX_COUNTER_BYTES)
    except FileNotFoundError:
        return 0
    except fsutil.NotRegularFile as exc:
        raise _not_regular(path, exc) from None
    except fsutil.FileTooLarge:
        raise CorruptFile(path, 1, "expected a sequence number, got a large file") from None
    text = raw.decode("ascii", errors="replace").strip()
    if not text.isdigit() or not text.isascii():
        raise CorruptFile(path, 1, f"expected a sequence number, got {text[:20]!r}")
    return int(text)


def next_sequence(handoffs_root: str) -> str:
    """Allocate the next six-digit sequence number of the mailbox at `handoffs_root`."""
    path = os.path.join(handoffs_root, SEQUENCE)
    with SequenceLock(handoffs_root):
        number = read_counter(path) + 1
        filewrite.atomic_write(path, f"{number:06d}\n".encode())
    return f"{number:06d}"
