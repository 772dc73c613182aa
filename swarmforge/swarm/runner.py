"""The headless backend: one supervising process that keeps every role's process running.

It is started detached by `up`, holds `.swarmforge/runner.lock` for its life,
restarts a role process that exits (with a growing pause), and on SIGTERM ends
every role's whole process tree before it exits. If it is killed with SIGKILL,
its roles' processes carry the run's tag, so `gc` or the next `up` finds them.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from types import FrameType

from swarmforge import fsutil
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff.daemon import Waker
from swarmforge.locks import FileLock
from swarmforge.swarm import layout, procs, roles, runrecord
from swarmforge.swarm.config import load_config

PID = os.path.join(".swarmforge", "runner.pid")
LOCK = os.path.join(".swarmforge", "runner.lock")
CHECK_SECONDS = 0.5
MAX_BACKOFF = 30.0


class Child:
    """One role's process and its restart schedule."""

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str], log: str) -> None:
        self.argv, self.cwd, self.env, self.log = argv, cwd, env, log
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self.next_start = 0.0

    def start(self) -> int:
        """Start the process; its pid."""
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self.proc.pid


def _logger(root: str) -> logging.Logger:
    log = logging.getLogger(f"runner:{root}")
    log.setLevel(logging.INFO)
    if not log.handlers:
        handler = logging.FileHandler(layout.log_file(root, "runner"), encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
    return log


def _children(root: str) -> dict[str, Child]:
    record = runrecord.load(root)
    if record is None:
        raise SwarmforgeError(f"No run to supervise in {root}: run `swarmforge up`.")
    config = load_config(root)
    out = {}
    for role in record.roles:
        env = layout.role_env(root, record.run_id, role)
        out[role.name] = Child(
            roles.command(root, config, role, env), role.path, env, layout.log_file(root, role.name)
        )
    return out


def _save_pids(root: str, children: dict[str, Child]) -> None:
    record = runrecord.load(root)
    if record is None:
        return
    for role in record.roles:
        child = children.get(role.name)
        role.pid = child.proc.pid if child and child.proc else None
    record.runner_pid = os.getpid()
    runrecord.save(root, record)


def serve(root: str) -> None:
    """Supervise the run of the project at `root` until SIGTERM."""
    with FileLock(os.path.join(root, LOCK), what="the swarm runner"):
        fsutil.atomic_write(os.path.join(root, PID), f"{os.getpid()}\n".encode())
        log = _logger(root)
        waker = Waker()
        stopping = []

        def on_signal(signum: int, frame: FrameType | None) -> None:
            stopping.append(signum)
            waker.set()

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, on_signal)
        children = _children(root)
        try:
            for name, child in children.items():
                log.info("starting %s: pid %d", name, child.start())
            _save_pids(root, children)
            while not stopping:
                if _restart_exited(children, log):
                    _save_pids(root, children)
                waker.wait(CHECK_SECONDS)
        finally:
            # Every role at once: their shutdowns overlap instead of adding up.
            started = [c.proc.pid for c in children.values() if c.proc is not None]
            ended = procs.terminate([p for pid in started for p in procs.tree(pid)])
            for child in children.values():
                if child.proc is not None:
                    child.proc.poll()
            log.info("stopped %d role process(es)", len(ended))
            os.unlink(os.path.join(root, PID))


def _restart_exited(children: dict[str, Child], log: logging.Logger) -> bool:
    now = time.monotonic()
    changed = False
    for name, child in children.items():
        if child.proc is None or child.proc.poll() is None:
            continue
        if child.next_start == 0.0:
            pause = min(MAX_BACKOFF, 2.0**child.restarts)
            log.warning("%s exited %s; restarting in %.0f s", name, child.proc.returncode, pause)
            child.next_start = now + pause
        elif now >= child.next_start:
            child.restarts += 1
            child.next_start = 0.0
            log.info("restarted %s: pid %d", name, child.start())
            changed = True
    return changed
