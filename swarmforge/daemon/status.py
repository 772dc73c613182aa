"""The daemon's status: whether it runs, and each role's handoffs waiting and failed."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from swarmforge import roletable
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import running_pid
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import waiting
from swarmforge.handoff.mailbox import Box, Mailbox


@dataclass(frozen=True)
class RoleMail:
    """One role's handoffs waiting in its outbox, and those that could not be delivered."""

    role: str
    outbox: int
    failed: int


@dataclass(frozen=True)
class DaemonStatus:
    """The daemon's state and every role's outbox and failed counts."""

    project: str
    pid: int | None
    pid_file: str
    log: str
    roles: list[RoleMail]

    @property
    def running(self) -> bool:
        return self.pid is not None

    def as_json(self) -> dict[str, object]:
        """The shape `swarmforge daemon status --json` prints."""
        shown = asdict(self)
        return {"project": self.project, "running": self.running, **shown, "pid": self.pid or None}


def status(root: str) -> DaemonStatus:
    """The daemon's state and every role's outbox and failed counts."""
    paths = Paths(root)
    try:
        roles = roletable.read_roles(root)
    except SwarmforgeError:
        roles = {}
    boxes = []
    for name, entry in roles.items():
        box = Mailbox(entry.path)
        failed = [n for n in _names(box.path(Box.FAILED)) if n.endswith(".error")]
        boxes.append(RoleMail(name, len(waiting.pending(box.path(Box.OUTBOX))), len(failed)))
    return DaemonStatus(root, running_pid(paths), paths.pid, paths.log, boxes)


def _names(directory: str) -> list[str]:
    try:
        return [entry.name for entry in Path(directory).iterdir()]
    except FileNotFoundError:
        return []
