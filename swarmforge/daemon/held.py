"""The mail the daemon holds: outbox files it can neither deliver nor fail yet (a
recipient's mailbox unsafe, its worktree gone, another host out of reach), with why.

The daemon rewrites `daemon/held.json` whenever that changes; `status` and `doctor` read
it. Only a running daemon holds anything: with none running, nothing is shown held.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from swarmforge import filewrite, fsutil, statedir
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import running_pid
from swarmforge.layout import HELD_FILE

LIMIT = 1 << 20  # bytes of held.json read at most


@dataclass(frozen=True)
class Held:
    """One outbox file held, and why."""

    path: str
    reason: str

    @property
    def name(self) -> str:
        return Path(self.path).name


def write(root: str, stuck: Mapping[str, str]) -> None:
    """Record the outbox files held (path -> why)."""
    path = statedir.path(root, HELD_FILE)
    fsutil.makedirs(str(Path(path).parent))
    shown = [{"path": p, "reason": why} for p, why in sorted(stuck.items())]
    filewrite.atomic_write(path, (json.dumps(shown, indent=1) + "\n").encode(), durable=False)


def read(root: str) -> list[Held]:
    """What the running daemon holds; nothing if no daemon runs or its record is unreadable."""
    if running_pid(Paths(root)) is None:
        return []
    try:
        found = json.loads(fsutil.read_regular(statedir.path(root, HELD_FILE), limit=LIMIT))
    except (OSError, ValueError):
        return []
    if not isinstance(found, list):
        return []
    return [
        Held(str(item["path"]), str(item["reason"]))
        for item in found
        if isinstance(item, dict) and "path" in item and "reason" in item
    ]
