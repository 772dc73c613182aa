"""The one lock that serialises swarmforge's git writes in a project.

A `locks.Exclusive` on `<root>/.swarmforge/git.lock`: the kernel drops it when its
holder dies, however it dies, so a dead holder never blocks anyone, and the lock
file is never removed (removing it would let two holders lock two different files).
Lookups take no lock. Not reentrant: code that holds it calls the `*_locked`
variants of the functions that would take it again.
"""

from __future__ import annotations

from swarmforge import statedir
from swarmforge.layout import GIT_LOCK
from swarmforge.locks import Exclusive


def lock_path(root: str) -> str:
    """The lock file of the project at `root`."""
    return statedir.path(root, GIT_LOCK)


def git_lock(root: str) -> Exclusive:
    """Hold the project's git write lock for the duration of the block."""
    # Threads of one process exclude each other as processes do: each `with` opens
    # its own descriptor. The descriptor is O_CLOEXEC: git children never inherit it.
    return Exclusive(lock_path(root))
