"""The headless runner: it holds the runner lock, starts the roles, and ends them all on SIGTERM."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path
from types import FrameType

from swarmforge import filewrite, logfile, statedir, tagging
from swarmforge.agents import probe
from swarmforge.config import sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.settings import Settings, load_settings
from swarmforge.daemon.doorbell import Doorbell
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import RUNNER_LOCK, RUNNER_PID
from swarmforge.locks import FileLock
from swarmforge.swarm import placement, rolecommand
from swarmforge.swarm.headless.child import Child
from swarmforge.swarm.headless.starts import restart_exited, start_due
from swarmforge.swarm.pacer import Pacer

CHECK_SECONDS = 0.5


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
        env = rolecommand.process_env(root, config, record.run_id, role, settings, "headless")
        out[role.name] = Child(
            rolecommand.command(root, config, role, env, "headless"),
            role.path,
            env,
            placement.log_file(root, role.name),
            settings.role(role.name).restart,
            agent=not role.is_exec,
            give_up_after=settings.role(role.name).give_up_after,
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
    pid_file = Path(statedir.path(root, RUNNER_PID))
    with FileLock(statedir.path(root, RUNNER_LOCK), what="the swarm runner"):
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
            start_due(root, run_id, children, pacer, log)
            _save_pids(root, children)
            # Last: `up` returns once it sees this file, and the session record is complete by then.
            filewrite.atomic_write(str(pid_file), f"{os.getpid()}\n".encode())
            refreshed = 0.0
            while not stopping:
                first = start_due(root, run_id, children, pacer, log)
                if restart_exited(root, run_id, children, pacer, log) or first:
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
            if pid_file.exists():
                pid_file.unlink()
