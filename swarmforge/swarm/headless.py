"""The headless backend: one supervising process that keeps every role's process running.

It is started detached by `up`, holds `.swarmforge/runner.lock` for its life,
records each role process's start and exit for `status`, restarts one that
failed as the role's `restart` setting says (with a growing pause), and on
SIGTERM ends every role's whole process tree before it exits. If it is killed with SIGKILL,
its roles' processes carry the run's tag, so `gc` or the next `up` finds them. Every
few seconds it records each role's agent state (agents/probe.py). Agents start, and
restart, only as the `[start]` caps allow (ramp.py); exec roles start at once.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from types import FrameType

from swarmforge import fsutil, logfile, proc, tagging
from swarmforge.agents import lifecycle, probe
from swarmforge.config import rolerecord, sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.settings import Restart, Settings, load_settings
from swarmforge.daemon.wakeups import Doorbell
from swarmforge.errors import SwarmforgeError, shell_status
from swarmforge.layout import RUNNER_LOCK, RUNNER_PID
from swarmforge.locks import FileLock
from swarmforge.swarm import placement, rolecommand
from swarmforge.swarm.bootstrap import marks
from swarmforge.swarm.pacer import Pacer

CHECK_SECONDS = 0.5


class Child:
    """One role's process and its restart schedule."""

    def __init__(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        log: str,
        policy: Restart,
        agent: bool = True,
    ) -> None:
        self.argv, self.cwd, self.env, self.log, self.policy = argv, cwd, env, log, policy
        self.agent = agent  # an agent's starts are paced (ramp.py); an exec role's are not
        self.proc: proc.Started | None = None
        self.restarts = 0
        self.next_start = 0.0
        self.finished = False  # exited, and its policy says it stays so

    def start(self) -> int:
        """Start the process; its pid."""
        with open(self.log, "ab") as out:
            self.proc = proc.start(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=proc.DEVNULL,
                stdout=out.fileno(),
                stderr=proc.STDOUT,
                session=True,
            )
        return self.proc.pid

    def tail(self) -> list[str]:
        """The last lines of the role's log."""
        try:
            with open(self.log, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 8192))
                return f.read().decode(errors="replace").splitlines()
        except OSError:
            return []


def _logger(root: str) -> logging.Logger:
    return logfile.logger(f"runner:{root}", placement.log_file(root, "runner"))


def _children(root: str) -> tuple[str, dict[str, Child], Settings]:
    record = sessionrecord.load(root)
    if record is None:
        raise SwarmforgeError(f"No run to supervise in {root}: run `swarmforge up`.")
    config = load_config(root)
    settings = load_settings(root, config.names)
    out = {}
    for role in record.roles:  # a setup-failed role is held until its setup succeeds
        env = rolerecord.role_env(root, record.run_id, role)
        out[role.name] = Child(
            rolecommand.command(root, config, role, env, "headless"),
            role.path,
            env,
            placement.log_file(root, role.name),
            settings.role(role.name).restart,
            agent=not role.is_exec,
        )
    return record.run_id, out, settings


def _save_pids(root: str, children: dict[str, Child]) -> None:
    def change(record: sessionrecord.SessionRecord) -> None:
        for role in record.roles:
            child = children.get(role.name)
            role.pid = child.proc.pid if child and child.proc else None
        record.runner_pid = os.getpid()

    sessionrecord.update(root, change)


def serve(root: str) -> None:
    """Supervise the run of the project at `root` until SIGTERM."""
    with FileLock(os.path.join(root, RUNNER_LOCK), what="the swarm runner"):
        log = _logger(root)
        doorbell = Doorbell()
        stopping = []

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stopping.append(signum)
            doorbell.set()

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, on_signal)
        run_id, children, settings = _children(root)
        stall_after = settings.stall.seconds
        pacer = Pacer(root, run_id, settings.start)
        names = tuple(children)
        try:
            _start_due(root, run_id, children, pacer, log)
            _save_pids(root, children)
            # Last: `up` returns once it sees this file, and the session record is complete by then.
            fsutil.atomic_write(os.path.join(root, RUNNER_PID), f"{os.getpid()}\n".encode())
            refreshed = 0.0
            while not stopping:
                first = _start_due(root, run_id, children, pacer, log)
                if _restart_exited(root, run_id, children, pacer, log) or first:
                    _save_pids(root, children)
                if time.monotonic() - refreshed >= probe.EVERY:
                    probe.refresh_roles(root, names, stall_after)
                    refreshed = time.monotonic()
                doorbell.wait(CHECK_SECONDS)
        finally:
            # Every role at once: their shutdowns overlap instead of adding up.
            started = [c.proc.pid for c in children.values() if c.proc is not None]
            ended = tagging.terminate([p for pid in started for p in tagging.tree(pid)])
            for child in children.values():
                if child.proc is not None:
                    child.proc.poll()
            log.info("stopped %d role process(es)", len(ended))
            if os.path.exists(os.path.join(root, RUNNER_PID)):
                os.unlink(os.path.join(root, RUNNER_PID))


def _start_due(
    root: str, run_id: str, children: dict[str, Child], pacer: Pacer, log: logging.Logger
) -> bool:
    """Start, in order, the roles never started yet whose turn has come; True if any did.

    An agent waits for `pacer`, and every agent after it waits too, so they start in
    the order of swarmforge.conf; exec roles start at once.
    """
    changed = False
    held = False
    for name, child in children.items():
        if child.proc is not None or child.finished:
            continue
        if marks.failure(root, name) is not None:
            continue  # until an `up` sets it up again
        if child.agent:
            if held or not pacer.ready():
                held = True
                continue
            pacer.started(name)
        pid = child.start()
        lifecycle.started(root, name, run_id, pid, 0)
        log.info("starting %s: pid %d", name, pid)
        changed = True
    return changed


def _restart_exited(
    root: str,
    run_id: str,
    children: dict[str, Child],
    pacer: Pacer,
    log: logging.Logger,
) -> bool:
    now = time.monotonic()
    changed = False
    for name, child in children.items():
        if child.finished or child.proc is None or child.proc.poll() is None:
            continue
        if child.next_start == 0.0:
            code = shell_status(child.proc.returncode)
            pause = lifecycle.restart_pause(child.policy, code, child.restarts)
            lifecycle.exited(root, name, run_id, code, child.tail(), pause)
            if pause is None:
                log.warning("%s exited %s; not restarted (restart = %s)", name, code, child.policy)
                child.finished = True
                continue
            log.warning("%s exited %s; restarting in %.0f s", name, code, pause)
            child.next_start = now + pause
        elif now >= child.next_start and (not child.agent or pacer.ready()):
            # A restart is a start: it counts against `[start]` like the first one.
            if child.agent:
                pacer.started(name)
            child.restarts += 1
            child.next_start = 0.0
            pid = child.start()
            lifecycle.started(root, name, run_id, pid, child.restarts)
            log.info("restarted %s: pid %d", name, pid)
            changed = True
    return changed
