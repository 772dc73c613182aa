"""The one lock that serialises swarmforge's git writes in a project.

An flock on `<root>/.swarmforge/git.lock`: the kernel drops it when its holder
dies, however it dies, so a dead holder never blocks anyone, and the lock file
is never removed (removing it would let two holders lock two different files).
Lookups take no lock. Not reentrant: code that holds it calls the `*_locked`
variants of the functions that would take it again.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

STATE_DIR = ".swarmforge"
LOCK_NAME = "git.lock"


def lock_path(root: str) -> str:
    """The lock file of the project at `root`."""
    return os.path.join(root, STATE_DIR, LOCK_NAME)


@contextmanager
def git_lock(root: str) -> Iterator[None]:
    """Hold the project's git write lock for the duration of the block."""
    path = lock_path(root)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # An empty file that is only ever locked, never written, so fsutil.atomic_write
    # has nothing to do here. os.open sets O_CLOEXEC: git children never inherit it.
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        # flock locks per open file description, so threads of one process, each
        # with its own descriptor, exclude each other as processes do.
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
