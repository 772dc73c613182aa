"""Starting the daemon: detached, returning only once it runs or has given way to another."""

from __future__ import annotations

import os
import sys
import time

from swarmforge import fsutil, logfile
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import exited, process_of, running_pid
from swarmforge.errors import SwarmforgeError
from swarmforge.locks import is_held
from swarmforge.proc import detach

START_TIMEOUT = 15.0


def start(root: str, notify_args: list[str], env: dict[str, str] | None = None) -> tuple[int, bool]:
    """Start a detached daemon unless one runs; (pid, True if it was already running).

    Returns only once the daemon it started runs, or has given way to another: a
    start never leaves behind a daemon still waiting to take over. `env` adds to the
    daemon's environment (a run tags everything it starts).
    """
    paths = Paths(root)
    pid = running_pid(paths)
    if pid:
        return pid, True
    fsutil.makedirs(paths.dir)
    fsutil.narrow_dir(paths.dir)  # made under a permissive umask by an older version
    argv = [sys.executable, "-m", "swarmforge", "daemon", "run", "--project", root, *notify_args]
    child = process_of(_spawn(root, argv, paths, env))
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        pid = running_pid(paths)
        mine = child is not None and pid == child.pid
        if pid and (mine or exited(child, 0)):
            return pid, not mine
        if pid is None and exited(child, 0):
            # It gave way to a stop in progress, or to a daemon that a stop ended since.
            if is_held(paths.stop):
                raise SwarmforgeError("handoffd did not start: a stop is in progress.")
            raise SwarmforgeError(
                "handoffd exited at once.", details=_log_tail(paths), hint=f"See {paths.log}."
            )
        time.sleep(0.02)
    raise SwarmforgeError(
        f"handoffd did not start within {START_TIMEOUT:.0f} s.",
        details=_log_tail(paths),
        hint=f"See {paths.log}.",
    )


def _log_tail(paths: Paths, lines: int = 5) -> tuple[str, ...]:
    """The last lines of the daemon's log, indented, to show with an error."""
    try:
        fd = fsutil.open_regular(paths.log, os.O_RDONLY)
    except OSError:
        return ()
    try:
        os.lseek(fd, max(0, os.fstat(fd).st_size - 4096), os.SEEK_SET)
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    return tuple(f"  | {line}" for line in data.decode(errors="replace").splitlines()[-lines:])


def _spawn(root: str, argv: list[str], paths: Paths, env: dict[str, str] | None) -> int:
    """Start `argv` in the background, detached; its pid."""
    log = logfile.open_log(paths.log)
    try:
        return detach.detach(argv, cwd=root, extra=env, log=log)  # its output goes to the log
    finally:
        os.close(log)
