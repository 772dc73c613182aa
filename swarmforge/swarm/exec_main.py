"""The process of a headless role's loop: built from the run record, serves until stopped."""

from __future__ import annotations

import logging
import os
import signal
from types import FrameType

from swarmforge import logfile
from swarmforge.errors import SwarmforgeError
from swarmforge.swarm import agents, placement, roles, runrecord
from swarmforge.swarm.config import load_config
from swarmforge.swarm.execrole import ExecRole, ItemCommand, printout_on_stdin
from swarmforge.swarm.roster import SwarmConfig
from swarmforge.swarm.runrecord import RoleRecord


def item_command(root: str, config: SwarmConfig, record: RoleRecord) -> ItemCommand:
    """What role `record` runs per item: its exec command, or its agent's non-interactive mode."""
    spec = config.role(record.name)
    if spec.is_exec:
        return printout_on_stdin(agents.exec_argv(spec))
    if not agents.loops_headless(spec):
        raise SwarmforgeError(
            f"Role '{record.name}' runs agent '{spec.agent}', which has no per-item loop.",
            hint="Only exec roles, and claude or codex roles of a headless run, run one.",
        )
    launch = roles.launch(root, config, record)
    return lambda printout: agents.item_invocation(spec, launch, printout)


def _logger(root: str, name: str) -> logging.Logger:
    return logfile.logger(f"role:{name}", placement.log_file(root, name))


def serve_role(root: str, name: str) -> None:
    """Run the loop of role `name` of the project at `root` until SIGTERM."""
    record = runrecord.load(root)
    role = record.role(name) if record else None
    if record is None or role is None:
        raise SwarmforgeError(f"Role '{name}' is not part of a run in {root}.")
    command = item_command(root, load_config(root), role)
    log = _logger(root, name)
    path = placement.log_file(root, name)
    output = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    env = placement.role_env(root, record.run_id, role)
    loop = ExecRole(name, role.path, role.mode, command, env, log, output)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        loop.stop()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    log.info("%s: serving %s items with %s", name, role.mode, role.agent)
    try:
        loop.serve()
    finally:
        os.close(output)
        log.info("%s: stopped", name)
