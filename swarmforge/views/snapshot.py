"""The run as a view shows it at one moment: every role's row, read now.

Everything here only reads the project: the views (watch/, cockpit/) never write to it.
With `[transport]`, the roles of the swarm's other hosts come from their heartbeats
(swarm/status/heartbeats.py). When each is read again is feed.py's business.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from swarmforge.swarm import placement
from swarmforge.swarm.status.crosshost import CrossHost
from swarmforge.swarm.status.summary import SwarmStatus, status
from swarmforge.views.rows import Row, row


@dataclass(frozen=True)
class Snapshot:
    """The run as the view shows it at one moment."""

    project: str
    state: str  # none, running or stopped (SwarmStatus.state)
    run_id: str | None
    backend: str | None
    base: str
    rows: list[Row]
    cross: CrossHost | None = None  # with [transport]: the other hosts and their roles
    worktrees: tuple[str, ...] = ()  # of this host's roles: where their work changes
    held: tuple[str, ...] = ()  # each handoff the daemon holds, and why, as one line


def snapshot(root: str, now: float | None = None, hosts: bool = False) -> Snapshot:
    """Every role's row, read now (some git calls per role: call it off the UI thread);
    with `hosts` and `[transport]`, the other hosts' roles too (a NATS round trip)."""
    found: SwarmStatus = status(root, hosts=hosts)
    base = placement.main_branch(found.project)
    moment = time.time() if now is None else now
    return Snapshot(
        project=found.project,
        state=found.state,
        run_id=found.run_id,
        backend=found.backend,
        base=base,
        rows=[row(found.project, base, r, moment) for r in found.roles],
        cross=found.cross,
        worktrees=tuple(r.path for r in found.roles),
        held=tuple(f"{h.name}: {h.reason}" for h in found.held),
    )
