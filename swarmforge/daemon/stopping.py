"""Stopping the daemon: signalled, killed if it will not go, and waited for until it is gone."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import psutil

from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import exited, process_of, read_pid, running_pid
from swarmforge.errors import SwarmforgeError
from swarmforge.locks import HeldMarker
from swarmforge.waiting import wait_until

STOP_TIMEOUT = 10.0


def _wait_gone(paths: Paths, seconds: float) -> bool:
    """Wait until no daemon holds the lock; False if one still does after `seconds`."""
    return wait_until(lambda: running_pid(paths) is None, seconds)


def stop(root: str, timeout: float = STOP_TIMEOUT) -> int | None:
    """Stop the daemon and return once it is gone; its pid, or None if none was running.

    The stop file exists, held, until no daemon holds the lock: a daemon that takes
    the lock meanwhile (one a racing `start` launched) sees it and exits at once.
    """
    paths = Paths(root)
    if not Path(paths.dir).is_dir():
        return None
    # Found before the stop file exists: the daemon may let go of the lock as soon as
    # it sees that file, a moment before its process is gone.
    seen = running_pid(paths)
    stopped = [p for p in (_daemon_process(paths),) if p is not None]
    with HeldMarker(paths.stop):
        for process in stopped:
            _signal(process, signal.SIGTERM)

        def gone() -> bool:
            if _wait_gone(paths, 0.05):
                return True
            process = _daemon_process(paths)
            if process is not None and all(process.pid != p.pid for p in stopped):
                stopped.append(process)
                _signal(process, signal.SIGTERM)
            return False

        if not wait_until(gone, timeout, 0):  # gone() itself waits
            _kill(paths, stopped)
        for process in stopped:
            if not exited(process, timeout):
                raise SwarmforgeError(f"handoffd (pid {process.pid}) would not stop.")
        if read_pid(paths) is not None and running_pid(paths) is None:
            Path(paths.pid).unlink()  # left by a daemon that was killed
    return int(stopped[0].pid) if stopped else seen


def _kill(paths: Paths, stopped: list[psutil.Process]) -> None:
    """Kill what would not stop when asked; an error if the lock is still held."""
    process = _daemon_process(paths)
    if process is not None:
        stopped.append(process)
    for process in stopped:
        _signal(process, signal.SIGKILL)
    if not _wait_gone(paths, 5.0):
        raise SwarmforgeError(f"handoffd (pid {read_pid(paths) or '?'}) would not stop.")


def _daemon_process(paths: Paths) -> psutil.Process | None:
    """The process named by the pid file if it really is a daemon holding the lock.

    The pid file may be older than the daemon now holding the lock; its pid may
    since belong to an unrelated process, which must never be signalled.
    """
    process = process_of(read_pid(paths) or 0)
    if process is None:
        return None
    lock = os.path.realpath(paths.lock)
    try:
        if any(os.path.realpath(f.path) == lock for f in process.open_files()):
            return process
    except psutil.Error:
        pass
    return None


def _signal(process: psutil.Process, signum: int) -> None:
    with contextlib.suppress(psutil.Error):
        process.send_signal(signum)  # never to a newer process that reused the pid
