"""Keeping the machine awake while a swarm runs: the command that does it here, if any."""

from __future__ import annotations

import sys

from swarmforge.proc import spawn


def sleep_inhibitor_argv(
    *, platform: str = sys.platform, path: str | None = None
) -> list[str] | None:
    """The command that keeps the machine awake until killed, or None if there is none."""
    if spawn.which("systemd-inhibit", path):
        return [
            "systemd-inhibit",
            "--what=idle:sleep",
            "--who=swarmforge",
            "--why=a swarm is running",
            "sleep",
            "infinity",
        ]
    if platform == "darwin" and spawn.which("caffeinate", path):
        return ["caffeinate", "-i"]
    return None
