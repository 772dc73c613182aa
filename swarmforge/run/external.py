"""Tasks that end out of the orchestrator's sight: background workers and role handoffs.

A background worker is a detached process: it has ended when its report is
published, and died if its process is gone without one. A role task has ended
when the role has completed the handoff it was given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.errors import SwarmforgeError
from swarmforge.run import roletask, worker

if TYPE_CHECKING:
    from swarmforge.run.orchestrator import Orchestrator


def poll(orch: Orchestrator) -> None:
    """Complete every started background or role task that has ended."""
    if not orch.outside:
        return
    from swarmforge.swarm.procs import is_alive

    for flight in list(orch.outside.values()):
        if not flight.launched:
            continue
        if flight.kind == "background":
            outcome = worker.finished(orch.reports, flight.task_id)
            if outcome is not None:
                orch.complete(flight, outcome)
            elif not is_alive(flight.pid) and worker.finished(orch.reports, flight.task_id) is None:
                orch.complete(flight, SwarmforgeError("the background worker died"))
        elif flight.kind == "role" and flight.role and flight.handoff:
            entry = roletask.role_entry(orch.root, flight.role, flight.task_id)
            found = roletask.where(entry, flight.handoff)
            if found and found[0] == "completed":
                ok = roletask.outcome(found[1])
                orch.complete(flight, worker.Outcome(flight.task_id, ok, None, found[1]))
