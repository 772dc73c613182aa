"""The daemon's life: one per project (a lock), pid file, detached start, stop, status."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from dataclasses import asdict, dataclass
from types import FrameType

import psutil

from swarmforge import filewrite, fsutil, logfile, roletable, tagging
from swarmforge.daemon.alerts import Follower
from swarmforge.daemon.arrivals import Arrivals
from swarmforge.daemon.dispatcher import SWEEP_SECONDS, Dispatcher, Paths
from swarmforge.daemon.wake import Waker
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import waiting
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.locks import FileLock, HeldMarker, is_held, remove_unless_held
from swarmforge.proc import detach
from swarmforge.waiting import wait_until

START_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0


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


def logger(root: str) -> logging.Logger:
    """The daemon's logger for the project at `root` (its file handler is added by `run`)."""
    return logging.getLogger(f"handoffd:{root}")


def _logger(paths: Paths) -> logging.Logger:
    return logfile.logger(logger(paths.root).name, paths.log)


def run(root: str, waker: Waker, *, once: bool = False) -> int:
    """Run the daemon in this process until stopped (or for one pass); files delivered.

    Another daemon of the project makes this one refuse at once. A daemon that gets
    the lock while a `stop` is in progress exits at once too, leaving its stop file.
    """
    paths = Paths(root)
    with FileLock(paths.lock, what=f"handoffd for {root}", patience=0):
        log = _logger(paths)
        if not remove_unless_held(paths.stop):
            log.info("not starting (pid %d): a stop is in progress", os.getpid())
            return 0
        daemon = Dispatcher(root, waker, log)
        delivered = 0
        try:
            _link(daemon, once)
            filewrite.atomic_write(paths.pid, f"{os.getpid()}\n".encode())
            log.info("started (pid %d, waker %s)", os.getpid(), waker.name)
            daemon.load_roles()
            daemon.sweep()
            delivered = len(daemon.run_once()) if once else _serve(daemon, paths)
            return delivered
        finally:
            if read_pid(paths) == os.getpid():
                os.unlink(paths.pid)
            log.info("stopped after delivering %d file(s)", delivered)
            if daemon.crossing is not None:
                daemon.crossing.close()
            daemon.changed.close()


def _link(daemon: Dispatcher, once: bool) -> None:
    """With `[transport]` set, give the daemon its way to the roles of other hosts.

    Imported only then: one machine needs neither the settings' transport nor nats-py.
    A broken swarmforge.toml or a missing extra is logged, and local mail still flows.
    """
    from swarmforge.config.settings import load_settings

    try:
        transport = load_settings(daemon.paths.root).transport
    except SwarmforgeError as exc:
        daemon.no_crossing = f"the settings cannot be read: {exc.message}"
        daemon.log.error("mail cannot cross hosts: %s", daemon.no_crossing)
        return
    if transport is None:
        return
    try:
        from swarmforge.daemon.crossing import Crossing
    except ImportError:
        daemon.no_crossing = (
            "[transport] is set but nats-py is missing (pip install 'swarmforge[nats]')"
        )
        daemon.log.error("mail cannot cross hosts: %s", daemon.no_crossing)
        return
    daemon.crossing = Crossing(
        daemon.paths.root, transport, daemon.remote, daemon.log, daemon.changed.set
    )
    daemon.crossing.serve(daemon.roles)
    daemon.crossing.start(wait=5.0 if once else 0.0)


def _serve(daemon: Dispatcher, paths: Paths) -> int:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        daemon.stopping = True
        daemon.changed.set()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    # The handoff layer stands without the swarm's: only the serving daemon needs this,
    # imported once a stop can be heard (the import takes a moment).
    from swarmforge.daemon import budget

    arrivals = Arrivals(daemon.changed)
    arrivals.start()
    # Notifications follow the event log, whose appends wake this loop: it lies in the
    # same directory as roles.tsv.
    follower = Follower(paths.root, lambda line: daemon.log.warning("%s", line))
    budgets = budget.Tracker(paths.root, daemon.log)  # checks in the background, never raises
    delivered = 0
    first = True
    swept = time.monotonic()
    try:
        while not daemon.stop_requested():
            if daemon.load_roles() or first:
                arrivals.watch([*daemon.outboxes(), os.path.dirname(paths.roles), paths.dir])
                first = False
            delivered += len(daemon.run_once())
            if daemon.crossing is not None:
                daemon.crossing.beat()
            follower.poll()
            budgets.poll()
            if daemon.stop_requested():
                break
            if time.monotonic() - swept > SWEEP_SECONDS:
                daemon.sweep()
                swept = time.monotonic()
            daemon.wait()
    finally:
        arrivals.stop()
        budgets.wait()  # a check under way records and reports its crossings
        follower.wait()  # notifications on their way are sent, not lost with the daemon
    return delivered


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
    child = _process(_spawn(root, argv, paths, env))
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        pid = running_pid(paths)
        mine = child is not None and pid == child.pid
        if pid and (mine or _exited(child, 0)):
            return pid, not mine
        if pid is None and _exited(child, 0):
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


def _wait_gone(paths: Paths, seconds: float) -> bool:
    """Wait until no daemon holds the lock; False if one still does after `seconds`."""
    return wait_until(lambda: running_pid(paths) is None, seconds)


def stop(root: str, timeout: float = STOP_TIMEOUT) -> int | None:
    """Stop the daemon and return once it is gone; its pid, or None if none was running.

    The stop file exists, held, until no daemon holds the lock: a daemon that takes
    the lock meanwhile (one a racing `start` launched) sees it and exits at once.
    """
    paths = Paths(root)
    if not os.path.isdir(paths.dir):
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
            if not _exited(process, timeout):
                raise SwarmforgeError(f"handoffd (pid {process.pid}) would not stop.")
        if read_pid(paths) is not None and running_pid(paths) is None:
            os.unlink(paths.pid)  # left by a daemon that was killed
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
    process = _process(read_pid(paths) or 0)
    if process is None:
        return None
    lock = os.path.realpath(paths.lock)
    try:
        if any(os.path.realpath(f.path) == lock for f in process.open_files()):
            return process
    except psutil.Error:
        pass
    return None


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid) if pid else None
    except psutil.Error:
        return None


def _exited(process: psutil.Process | None, seconds: float) -> bool:
    """Wait until the process has exited (a zombie has); the lock is dropped a moment before
    the interpreter finishes, and `stop` promises the process itself is gone."""
    return process is None or not tagging.wait_gone([process], seconds)


def _signal(process: psutil.Process, signum: int) -> None:
    with contextlib.suppress(psutil.Error):
        process.send_signal(signum)  # never to a newer process that reused the pid


@dataclass(frozen=True)
class RoleMail:
    """One role's handoffs waiting in its outbox, and those that could not be delivered."""

    role: str
    outbox: int
    failed: int


@dataclass(frozen=True)
class DaemonStatus:
    """The daemon's state and every role's outbox and failed counts."""

    project: str
    pid: int | None
    pid_file: str
    log: str
    roles: list[RoleMail]

    @property
    def running(self) -> bool:
        return self.pid is not None

    def as_json(self) -> dict[str, object]:
        """The shape `swarmforge daemon status --json` prints."""
        shown = asdict(self)
        return {"project": self.project, "running": self.running, **shown, "pid": self.pid or None}


def status(root: str) -> DaemonStatus:
    """The daemon's state and every role's outbox and failed counts."""
    paths = Paths(root)
    try:
        roles = roletable.read_roles(root)
    except SwarmforgeError:
        roles = {}
    boxes = []
    for name, entry in roles.items():
        box = Mailbox(entry.path)
        failed = [n for n in _names(box.path(Box.FAILED)) if n.endswith(".error")]
        boxes.append(RoleMail(name, len(waiting.pending(box.path(Box.OUTBOX))), len(failed)))
    return DaemonStatus(root, running_pid(paths), paths.pid, paths.log, boxes)


def _names(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []
