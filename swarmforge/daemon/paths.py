"""The daemon's files under `<root>/.swarmforge/daemon/`: pid file, log, lock, stop file."""

from __future__ import annotations

from pathlib import Path

from swarmforge.layout import DAEMON_DIR, REMOTE_TSV, ROLES_TSV


class Paths:
    """The daemon's runtime files under `<root>/.swarmforge/daemon/`."""

    def __init__(self, root: str) -> None:
        self.root = root
        top = Path(root)
        directory = top / DAEMON_DIR
        self.dir = str(directory)
        self.pid = str(directory / "handoffd.pid")
        self.log = str(directory / "handoffd.log")
        self.stop = str(directory / "stop")
        self.lock = str(directory / "handoffd.lock")
        self.roles = str(top / ROLES_TSV)
        self.remote = str(top / REMOTE_TSV)
