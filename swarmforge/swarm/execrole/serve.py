"""A headless role's process: its loop built from the session record, served until SIGTERM."""

from __future__ import annotations

import logging
import os
import signal
from types import FrameType

from swarmforge import logfile
from swarmforge.agents.environment import agent_env
from swarmforge.config import sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.settings import load_settings
from swarmforge.errors import SwarmforgeError
from swarmforge.swarm import placement
from swarmforge.swarm.execrole.itemcommand import item_command
from swarmforge.swarm.execrole.loop import ExecRole


def _logger(root: str, name: str) -> logging.Logger:
    return logfile.logger(f"role:{name}", placement.log_file(root, name))


def serve_role(root: str, name: str) -> None:
    """Run the loop of role `name` of the project at `root` until SIGTERM."""
    record = sessionrecord.load(root)
    role = record.role(name) if record else None
    if record is None or role is None:
        raise SwarmforgeError(f"Role '{name}' is not part of a run in {root}.")
    config = load_config(root)
    command = item_command(root, config, role)
    log = _logger(root, name)
    path = placement.log_file(root, name)
    output = logfile.open_log(path)
    env = agent_env(root, record.run_id, role, load_settings(root, config.names).role(name))
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
