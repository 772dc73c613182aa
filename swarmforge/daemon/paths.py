"""The daemon's files under `<root>/.swarmforge/daemon/`: pid file, log, lock, stop file."""

from __future__ import annotations

from pathlib import Path

from swarmforge import statedir
from swarmforge.layout import DAEMON_DIR, REMOTE_TSV, ROLES_TSV


class Paths:
    """The daemon's runtime files under `<root>/.swarmforge/daemon/`."""

    def __init__(self, root: str) -> None:
        self.root = root
        directory = Path(statedir.path(root, DAEMON_DIR))
        self.dir = str(directory)
        self.pid = str(directory / "handoffd.pid")
        self.log = str(directory / "handoffd.log")
        self.stop = str(directory / "stop")
        self.lock = str(directory / "handoffd.lock")
        self.roles = statedir.path(root, ROLES_TSV)
        self.remote = statedir.path(root, REMOTE_TSV)
