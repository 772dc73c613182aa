"""Process-lifetime locks: an flock held by a long-running process, dropped at its death."""

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


def _open(path: str, flags: int) -> int:
    try:
        return fsutil.open_regular(path, flags)
    except fsutil.NotRegularFile as exc:
        raise SwarmforgeError(
            f"{path} is {exc.kind}, not a regular file.", hint="Remove it; it is made again."
        ) from None


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


class FileLock:
    """An exclusive flock on `path` for the life of a `with` block; refuses if held.

    `patience` is how long to wait for another holder to let go (0: refuse at once).
    The shared lock that is_held() takes for an instant is always waited out: it
    never makes a lock look taken.
    """

    def __init__(self, path: str, what: str, patience: float = PATIENCE) -> None:
        self.path = path
        self.what = what
        self.patience = patience
        self.fd = -1

    def __enter__(self) -> FileLock:
        fsutil.makedirs(os.path.dirname(self.path))
        self.fd = _open(self.path, _LOCK_FLAGS | os.O_CREAT)
        start = time.monotonic()
        while True:
            try:
                if _try_flock(self.fd, fcntl.LOCK_EX):
                    return self
                # A shared lock is granted only while nobody holds it exclusively: then
                # the lock is busy with is_held() probes alone, which end at once.
                probed = _try_flock(self.fd, fcntl.LOCK_SH)
                if probed:
                    fcntl.flock(self.fd, fcntl.LOCK_UN)
            except BaseException:
                os.close(self.fd)
                raise
            waited = time.monotonic() - start
            if waited > (PATIENCE if probed else self.patience):
                os.close(self.fd)
                raise SwarmforgeError(f"{self.what} is already running ({self.path} is held).")
            time.sleep(0.01 if probed else 0.02)

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
        fsutil.makedirs(os.path.dirname(self.path))
        while True:
            fd = _open(self.path, _LOCK_FLAGS | os.O_CREAT)
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
