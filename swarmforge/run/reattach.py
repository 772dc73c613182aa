"""Resume: what becomes of a task the journal says was running when the orchestrator died.

Command and lead tasks run again (at-least-once), except one given to a worker on
another host, whose attempt is waited for again (remote/sender.py). A background worker outlives
the orchestrator and is found again through its report file or its live pid;
a role task through the handoff it was given (delivered again if it was lost).
This module only looks; the orchestrator carries out what it decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from swarmforge.run import roletask
from swarmforge.run.journal.events import Event
from swarmforge.run.levels import Task
from swarmforge.run.outcome import Outcome, finished
from swarmforge.run.remote.attempts import running_attempt


@dataclass(frozen=True)
class Rerun:
    """Run the orphan again: nothing of its last attempt can be waited for."""

    task_id: str


@dataclass(frozen=True)
class Rejoin:
    """Wait for the orphan's worker again instead of starting a second one."""

    task_id: str
    kind: Literal["background", "role", "remote"]
    pid: int | None = None
    outcome: Outcome | None = None  # a background worker that ended unwatched
    role: str | None = None
    handoff: str | None = None
    redeliver: bool = False  # the role's handoff is gone: deliver it again first
    attempt: int | None = None  # the attempt a worker on another host was given


def orphan(
    task: Task, events: Sequence[Event], reports: str, root: str, remote: bool = False
) -> Rerun | Rejoin:
    """What to do with `task`, journaled running (per `events`) when its orchestrator died;
    `remote`: command tasks go to workers on other hosts in this life of the run."""
    found = None
    if remote and task.command is not None and not task.background:
        found = _remote(task.id, events)
    if task.background:
        found = _background(task.id, events, reports)
    if found is None and task.role:
        found = _role(task.id, task.role, events, root)
    return found or Rerun(task.id)


def last(events: Sequence[Event], task_id: str, field: str) -> object:
    """The latest non-empty `field` of task `task_id`'s task-state events."""
    for event in reversed(events):
        if event.kind == "task-state" and event.id == task_id:
            value = getattr(event, field, None)
            if value is not None:
                return value
    return None


def _background(task_id: str, events: Sequence[Event], reports: str) -> Rejoin | None:
    """Found again through its report or its live worker."""
    from swarmforge.proc.liveness import is_alive

    outcome = finished(reports, task_id)
    pid = last(events, task_id, "pid")
    if outcome is None and not (isinstance(pid, int) and is_alive(pid)):
        return None
    return Rejoin(task_id, "background", pid=pid if isinstance(pid, int) else None, outcome=outcome)


def _remote(task_id: str, events: Sequence[Event]) -> Rejoin | None:
    """Waited for again if its last claim gave it to a worker (which may still run it)."""
    attempt = running_attempt(events, task_id)
    return None if attempt is None else Rejoin(task_id, "remote", attempt=attempt)


def _role(task_id: str, role: str, events: Sequence[Event], root: str) -> Rejoin | None:
    """Found again through the handoff its claim named."""
    reason = last(events, task_id, "reason")
    if not (isinstance(reason, str) and reason.startswith("handoff:")):
        return None
    name = reason.removeprefix("handoff:")
    lost = roletask.where(roletask.role_entry(root, role, task_id), name) is None
    return Rejoin(task_id, "role", role=role, handoff=name, redeliver=lost)
