"""The daemon's life: one per project (a lock), pid file, detached start, stop, status."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from types import FrameType

import psutil

from swarmforge import fsutil, project
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import delivery
from swarmforge.handoff.daemon import Daemon, Paths
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.notify import Notifier
from swarmforge.handoff.watch import Watcher
from swarmforge.locks import FileLock, is_held

START_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0


def read_pid(paths: Paths) -> int | None:
    """The pid in the pid file, if there is a readable one."""
    try:
        with open(paths.pid, encoding="ascii") as f:
            text = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def running_pid(paths: Paths) -> int | None:
    """The running daemon's pid (0 if it has not written it yet), or None if none runs.

    The lock, not the pid file, decides: the kernel drops a dead (or zombie)
    daemon's lock, while its pid file may outlive it and its pid be reused.
    """
    return (read_pid(paths) or 0) if is_held(paths.lock) else None


def logger(root: str) -> logging.Logger:
    """The daemon's logger for the project at `root` (its file handler is added by `run`)."""
    return logging.getLogger(f"handoffd:{root}")


def _logger(paths: Paths) -> logging.Logger:
    log = logger(paths.root)
    log.setLevel(logging.INFO)
    log.propagate = False
    if not log.handlers:
        handler = logging.FileHandler(paths.log, encoding="utf-8")
        formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%dT%H:%M:%SZ")
        formatter.converter = time.gmtime
        handler.setFormatter(formatter)
        log.addHandler(handler)
    return log


def run(root: str, notifier: Notifier, *, once: bool = False) -> int:
    """Run the daemon in this process until stopped (or for one pass); files delivered."""
    paths = Paths(root)
    with FileLock(paths.lock, what=f"handoffd for {root}"):
        log = _logger(paths)
        daemon = Daemon(root, notifier, log)
        delivered = 0
        try:
            fsutil.atomic_write(paths.pid, f"{os.getpid()}\n".encode())
            if os.path.exists(paths.stop):
                os.unlink(paths.stop)  # left by a stop that found no daemon to stop
            log.info("started (pid %d, notifier %s)", os.getpid(), notifier.name)
            daemon.load_roles()
            daemon.sweep()
            delivered = len(daemon.run_once()) if once else _serve(daemon, paths)
            return delivered
        finally:
            if read_pid(paths) == os.getpid():
                os.unlink(paths.pid)
            log.info("stopped after delivering %d file(s)", delivered)
            daemon.changed.close()


def _serve(daemon: Daemon, paths: Paths) -> int:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        daemon.stopping = True
        daemon.changed.set()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    watcher = Watcher(daemon.changed)
    watcher.start()
    delivered = 0
    first = True
    try:
        while not daemon.stop_requested():
            if daemon.load_roles() or first:
                watcher.watch([*daemon.outboxes(), os.path.dirname(paths.roles), paths.dir])
                first = False
            delivered += len(daemon.run_once())
            if daemon.stop_requested():
                break
            daemon.wait()
    finally:
        watcher.stop()
    return delivered


def start(root: str, notify_args: list[str], env: dict[str, str] | None = None) -> tuple[int, bool]:
    """Start a detached daemon unless one runs; (pid, True if it was already running).

    `env` adds to the daemon's environment (a run tags everything it starts).
    """
    paths = Paths(root)
    pid = running_pid(paths)
    if pid is not None:
        return pid, True
    os.makedirs(paths.dir, exist_ok=True)
    argv = [sys.executable, "-m", "swarmforge", "daemon", "run", "--project", root, *notify_args]
    with open(paths.log, "ab") as log:
        # The shell puts the daemon in the background and exits at once: the daemon
        # is adopted by init, never a zombie of this process, and holds none of the
        # caller's stdin, stdout or stderr.
        subprocess.run(
            ["/bin/sh", "-c", 'exec "$@" &', "sh", *argv],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=root,
            check=True,
            env={**os.environ, **(env or {})},
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        pid = running_pid(paths)
        if pid:
            return pid, False
        time.sleep(0.02)
    raise SwarmforgeError(
        f"handoffd did not start within {START_TIMEOUT:.0f} s.", hint=f"See {paths.log}."
    )


def _gone_within(paths: Paths, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running_pid(paths) is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def stop(root: str, timeout: float = STOP_TIMEOUT) -> int | None:
    """Stop the daemon and return once it is gone; its pid, or None if none was running."""
    paths = Paths(root)
    pid = running_pid(paths)
    if pid is not None:
        fsutil.atomic_write(paths.stop, b"stop\n")
        if pid:
            _signal(pid, signal.SIGTERM)
        process = _process(pid)
        if not _gone_within(paths, timeout) or not _exited(process, timeout):
            pid = pid or read_pid(paths) or 0
            if pid:
                _signal(pid, signal.SIGKILL)
            if not _gone_within(paths, 5.0) or not _exited(process, 5.0):
                raise SwarmforgeError(f"handoffd (pid {pid}) would not stop.")
    for leftover in (paths.pid, paths.stop):
        if os.path.exists(leftover):
            os.unlink(leftover)
    return pid


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid) if pid else None
    except psutil.Error:
        return None


def _exited(process: psutil.Process | None, seconds: float) -> bool:
    """Wait until the process has exited (a zombie has); the lock is dropped a moment before
    the interpreter finishes, and `stop` promises the process itself is gone."""
    deadline = time.monotonic() + seconds
    while process is not None:
        try:
            # is_running also notices the pid reused by a newer process.
            if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.Error:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def status(root: str) -> dict[str, object]:
    """The daemon's state and every role's outbox and failed counts."""
    paths = Paths(root)
    pid = running_pid(paths)
    try:
        roles = project.read_roles(root)
    except SwarmforgeError:
        roles = {}
    boxes = []
    for name, entry in roles.items():
        box = Mailbox(entry.path)
        failed = [n for n in _names(box.path(Box.FAILED)) if n.endswith(".error")]
        boxes.append(
            {
                "role": name,
                "outbox": len(delivery.pending(box.path(Box.OUTBOX))),
                "failed": len(failed),
            }
        )
    return {
        "project": root,
        "running": pid is not None,
        "pid": pid or None,
        "pid_file": paths.pid,
        "log": paths.log,
        "roles": boxes,
    }


def _names(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []
