"""The daemon's files under `<root>/.swarmforge/daemon/`: pid file, log, lock, stop file."""

from __future__ import annotations

import os

from swarmforge.layout import DAEMON_DIR, REMOTE_TSV, ROLES_TSV


class Paths:
    """The daemon's runtime files under `<root>/.swarmforge/daemon/`."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.dir = os.path.join(root, DAEMON_DIR)
        self.pid = os.path.join(self.dir, "handoffd.pid")
        self.log = os.path.join(self.dir, "handoffd.log")
        self.stop = os.path.join(self.dir, "stop")
        self.lock = os.path.join(self.dir, "handoffd.lock")
        self.roles = os.path.join(root, ROLES_TSV)
        self.remote = os.path.join(root, REMOTE_TSV)
