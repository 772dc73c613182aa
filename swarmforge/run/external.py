"""Tasks that end out of the orchestrator's sight: background workers and role handoffs.

A background worker is a detached process: it has ended when its report is
published, and died if its process is gone without one. A role task has ended
when the role has completed the handoff it was given. This module only looks;
the orchestrator completes what it reports.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from swarmforge.errors import SwarmforgeError
from swarmforge.run import roletask
from swarmforge.run.levels import Flight
from swarmforge.run.outcome import Outcome, finished


class Ended(NamedTuple):
    """A task whose worker has ended, and how: its outcome, or the error that ended it."""

    flight: Flight
    result: Outcome | BaseException


def ended(flights: Iterable[Flight], reports: str, root: str) -> list[Ended]:
    """The started background and role tasks among `flights` that have ended."""
    found = []
    for flight in flights:
        if not flight.launched:
            continue
        if flight.kind == "background":
            result = _background_end(flight, reports)
        elif flight.kind == "role" and flight.role and flight.handoff:
            result = _role_end(flight, flight.role, flight.handoff, root)
        else:
            result = None
        if result is not None:
            found.append(Ended(flight, result))
    return found


def _background_end(flight: Flight, reports: str) -> Outcome | BaseException | None:
    from swarmforge.proc.liveness import is_alive

    outcome = finished(reports, flight.task_id)
    if outcome is not None:
        return outcome
    # Looked for again once the process is seen gone: it may have published just before.
    if not is_alive(flight.pid) and finished(reports, flight.task_id) is None:
        return SwarmforgeError("the background worker died")
    return None


def _role_end(flight: Flight, role: str, handoff: str, root: str) -> Outcome | None:
    entry = roletask.role_entry(root, role, flight.task_id)
    found = roletask.where(entry, handoff)
    if found and found[0] == "completed":
        ok = roletask.outcome(found[1])
        return Outcome(flight.task_id, ok, None, found[1])
    return None
