"""Process-lifetime locks: an flock held by a long-running process, dropped at its death."""

from __future__ import annotations

import errno
import fcntl
import os
import time

from swarmforge.errors import SwarmforgeError


def is_held(path: str) -> bool:
    """True if some live process holds the lock at `path`."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return True
        raise
    finally:
        os.close(fd)


PATIENCE = 2.0


class FileLock:
    """An exclusive flock on `path` for the life of a `with` block; refuses if held."""

    def __init__(self, path: str, what: str) -> None:
        self.path = path
        self.what = what
        self.fd = -1

    def __enter__(self) -> FileLock:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        # is_held() takes a shared lock for an instant; wait that out before refusing.
        deadline = time.monotonic() + PATIENCE
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(self.fd)
                    raise
            if time.monotonic() > deadline:
                os.close(self.fd)
                raise SwarmforgeError(f"{self.what} is already running ({self.path} is held).")
            time.sleep(0.02)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)
