"""Parking a level's tasks as it is made, and carrying out what humans decided since.

A task that park classification holds back is recorded in the park ledger (and
journaled) once; an approved one is not parked again. An approval lets a parked
task run on this resume; a rejection fails it for good.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from swarmforge.run import ledger
from swarmforge.run.levels import Level, Task
from swarmforge.run.park import park_reason

if TYPE_CHECKING:
    from swarmforge.run.orchestrator import Orchestrator


def parked(orch: Orchestrator, tasks: Sequence[Task]) -> set[str]:
    """The ids among `tasks` that wait for a decision, parking the new ones."""
    approved = ledger.approved(orch.dir)
    known = ledger.parked(orch.dir)
    waiting = set()
    for task in tasks:
        reason = park_reason(task)
        if reason is None or task.id in approved:
            continue
        waiting.add(task.id)
        if task.id not in known:
            ledger.park(orch.dir, task.id, reason)
            orch.record("task-parked", id=task.id, reason=reason)
    return waiting


def decide(orch: Orchestrator, level: Level) -> None:
    """Approve or reject the parked tasks of `level` that a human decided on."""
    approved, rejected = ledger.approved(orch.dir), ledger.rejected(orch.dir)
    for task_id in level.tasks:
        if level.queue.status(task_id) != "parked":
            continue
        if task_id in rejected:
            level.queue.reject(task_id)
            orch.state(level, task_id, "failed", reason="rejected")
        elif task_id in approved:
            level.queue.approve(task_id)
            orch.state(level, task_id, level.queue.status(task_id), reason="approved")
