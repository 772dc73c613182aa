"""The process of an exec role: builds its loop from the run record and serves until stopped."""

from __future__ import annotations

import logging
import os
import signal
from types import FrameType

from swarmforge.errors import SwarmforgeError
from swarmforge.swarm import agents, layout, runrecord
from swarmforge.swarm.config import load_config
from swarmforge.swarm.execrole import ExecRole


def serve_role(root: str, name: str) -> None:
    """Run exec role `name` of the project at `root` until SIGTERM."""
    record = runrecord.load(root)
    role = record.role(name) if record else None
    if record is None or role is None:
        raise SwarmforgeError(f"Role '{name}' is not part of a run in {root}.")
    argv = agents.exec_argv(load_config(root).role(name))
    log = logging.getLogger(f"role:{name}")
    log.setLevel(logging.INFO)
    path = layout.log_file(root, name)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    output = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    loop = ExecRole(
        name, role.path, role.mode, argv, layout.role_env(root, record.run_id, role), log, output
    )

    def on_signal(signum: int, frame: FrameType | None) -> None:
        loop.stop()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    log.info("%s: serving %s items with %s", name, role.mode, argv)
    try:
        loop.serve()
    finally:
        os.close(output)
        log.info("%s: stopped", name)
