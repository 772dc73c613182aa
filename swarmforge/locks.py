"""File locks: the one module that takes them. Every lock is an flock, which the kernel
drops when its holder dies, however it dies, so a dead holder never blocks anyone.

Not portalocker: importing it (4.4.2, Python 3.11) costs 52-72 ms (min-median of 40
runs of `python -X importtime -c "import portalocker"`), most of it importlib.metadata
plus typing and logging, against ~2 ms for the whole gate import; the agent-facing
helpers that take the sequence lock must start in a few milliseconds. fcntl.flock is
in the standard library on Linux and macOS, and costs ~0.15 ms to import.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time

from swarmforge import fsutil
from swarmforge.errors import SwarmforgeError

PATIENCE = 2.0
_LOCK_FLAGS = os.O_RDWR | os.O_CLOEXEC


def _try_flock(fd: int, operation: int) -> bool:
    """Take `operation` on `fd` without waiting; False if another holder conflicts."""
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _wait_exclusive(fd: int, patience: float) -> bool:
    """Take an exclusive lock on `fd`, waiting up to `patience` seconds; False if it stays held.

    The shared lock that is_held() takes for an instant is always waited out (at least
    PATIENCE): it never makes a lock look taken.
    """
    start = time.monotonic()
    delay = 0.0005  # a short first wait: the gate's critical section lasts a millisecond
    while True:
        if _try_flock(fd, fcntl.LOCK_EX):
            return True
        # A shared lock is granted only while nobody holds it exclusively: then the
        # lock is busy with is_held() probes alone, which end at once.
        probed = _try_flock(fd, fcntl.LOCK_SH)
        if probed:
            fcntl.flock(fd, fcntl.LOCK_UN)
        if time.monotonic() - start > (max(patience, PATIENCE) if probed else patience):
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def _open(path: str, flags: int) -> int:
    try:
        return fsutil.open_regular(path, flags)
    except fsutil.NotRegularFile as exc:
        raise SwarmforgeError(
            f"{path} is {exc.kind}, not a regular file.", hint="Remove it; it is made again."
        ) from None


def _create(path: str) -> int:
    """A descriptor on the lock file at `path`, made (with its directory) if missing."""
    fsutil.makedirs(os.path.dirname(path))
    return _open(path, _LOCK_FLAGS | os.O_CREAT)


def is_held(path: str) -> bool:
    """True if some live process holds the lock at `path` exclusively."""
    try:
        fd = _open(path, _LOCK_FLAGS)
    except FileNotFoundError:
        return False
    try:
        return not _try_flock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)


class Exclusive:
    """An exclusive lock on the lock file at `path` for the life of a `with` block.

    Others wait their turn: for ever, or with a `timeout` in seconds, after which
    SwarmforgeError names `what`. The file is made if missing and never removed:
    removing it would let two holders lock two different files.
    """

    def __init__(self, path: str, *, timeout: float | None = None, what: str = "lock") -> None:
        self.path = path
        self.timeout = timeout
        self.what = what
        self.fd = -1

    def __enter__(self) -> Exclusive:
        fd = _create(self.path)
        try:
            if self.timeout is None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            elif not _wait_exclusive(fd, self.timeout):
                waited = f"Timed out after {self.timeout:.0f} s waiting for the {self.what}"
                raise SwarmforgeError(
                    f"{waited} {self.path}.", hint="A live process holds it; find it with fuser."
                )
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing the only descriptor releases the lock


class ExclusiveFd:
    """An exclusive lock on open descriptor `fd` for the life of a `with` block.

    For a data file that is itself the lock; the descriptor stays open afterwards.
    Waits for ever. flock belongs to the open file description, so descriptors
    opened separately, in threads of one process too, exclude each other.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> ExclusiveFd:
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)


class FileLock:
    """An exclusive lock on `path` for the life of a `with` block; refuses if held.

    One holder at a time, others refused: for a process of which one runs at once.
    `patience` is how long to wait for another holder to let go (0: refuse at once).
    """

    def __init__(self, path: str, what: str, patience: float = PATIENCE) -> None:
        self.path = path
        self.what = what
        self.patience = patience
        self.fd = -1

    def __enter__(self) -> FileLock:
        fd = _create(self.path)
        try:
            taken = _wait_exclusive(fd, self.patience)
        except BaseException:
            os.close(fd)
            raise
        if not taken:
            os.close(fd)
            raise SwarmforgeError(f"{self.what} is already running ({self.path} is held).")
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


class HeldMarker:
    """A file that exists, locked, for the life of a `with` block, then is removed.

    Others see both that it exists and that a live process stands behind it
    (`remove_unless_held`); a marker left by a process that died is stale. Two
    holders of the same marker take turns.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> HeldMarker:
        while True:
            fd = _create(self.path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
            # The file may have been removed (by its last holder, or as stale) between
            # the open and the lock: a lock on a removed file announces nothing.
            if _same_file(fd, self.path):
                self.fd = fd
                return self
            os.close(fd)

    def __exit__(self, *exc: object) -> None:
        try:
            if _same_file(self.fd, self.path):
                os.unlink(self.path)
        finally:
            os.close(self.fd)


def remove_unless_held(path: str) -> bool:
    """Remove the marker at `path` unless a live process holds it; True if it is gone.

    Something other than a regular file there cannot be a marker's holder: False.
    """
    try:
        fd = fsutil.open_regular(path, _LOCK_FLAGS)
    except FileNotFoundError:
        return True
    except fsutil.NotRegularFile:
        return False
    try:
        if not _try_flock(fd, fcntl.LOCK_EX):
            return False
        if not _same_file(fd, path):
            return not os.path.lexists(path)
        os.unlink(path)
        return True
    finally:
        os.close(fd)


def _same_file(fd: int, path: str) -> bool:
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)
