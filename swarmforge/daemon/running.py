"""Which daemon runs: its pid file, the lock that decides, and its process."""

from __future__ import annotations

import psutil

from swarmforge import fsutil, tagging
from swarmforge.daemon.paths import Paths
from swarmforge.locks import is_held


def read_pid(paths: Paths) -> int | None:
    """The pid in the pid file, if there is a readable one."""
    try:
        text = fsutil.read_regular(paths.pid, limit=64).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def running_pid(paths: Paths) -> int | None:
    """The running daemon's pid (0 if it has not written it yet), or None if none runs.

    The lock, not the pid file, decides: the kernel drops a dead (or zombie)
    daemon's lock, while its pid file may outlive it and its pid be reused.
    """
    return (read_pid(paths) or 0) if is_held(paths.lock) else None


def process_of(pid: int) -> psutil.Process | None:
    """The process with this pid, or None if there is none (or `pid` is 0)."""
    try:
        return psutil.Process(pid) if pid else None
    except psutil.Error:
        return None


def exited(process: psutil.Process | None, seconds: float) -> bool:
    """Wait until the process has exited (a zombie has); the lock is dropped a moment before
    the interpreter finishes, and `stop` promises the process itself is gone."""
    return process is None or not tagging.wait_gone([process], seconds)
