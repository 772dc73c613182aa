"""The events of a run's journal: one model per kind, each line one of them.

Every event is one JSON line with `seq` (1, 2, 3, ... with no gap), `ts` and `kind`;
line n holds seq n.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from swarmforge.run.fields import Stamp, TaskId
from swarmforge.run.parking.rules import ParkReason
from swarmforge.run.taskgraph import Status


class _Event(BaseModel):
    # strict: a journal says 3 and true, never "3" or "yes"; frozen: a record never changes.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    seq: int
    ts: Stamp


class RunStarted(_Event):
    """A run began."""

    kind: Literal["run-started"]
    runId: str
    goal: str
    tasks: int


class RunResumed(_Event):
    """A run was picked up again."""

    kind: Literal["run-resumed"]
    runId: str


class TaskEnqueued(_Event):
    """A task entered the run with its initial status."""

    kind: Literal["task-enqueued"]
    id: TaskId
    status: Status
    parent: str | None = None


class TaskState(_Event):
    """A task changed status (written with every optional field, null or not)."""

    kind: Literal["task-state"]
    id: TaskId
    status: Status
    reason: str | None = None
    exitCode: int | None = None
    pid: int | None = None


class TaskParked(_Event):
    """A task was parked until a human decides."""

    kind: Literal["task-parked"]
    id: TaskId
    reason: ParkReason


class WorktreeEvent(_Event):
    """A task's worktree was created or removed (its uncommitted work rescued to a ref)."""

    kind: Literal["worktree"]
    id: TaskId
    action: Literal["created", "removed"]
    path: str
    branch: str
    rescued: str | None = None


class CheckpointEvent(_Event):
    """Every task's state after all events before this one."""

    kind: Literal["checkpoint"]
    states: dict[str, Status]
    parked: list[str]


class RunFinished(_Event):
    """Nothing could move any more."""

    kind: Literal["run-finished"]
    counts: dict[str, int]
    ok: bool


Event = Annotated[
    RunStarted
    | RunResumed
    | TaskEnqueued
    | TaskState
    | TaskParked
    | WorktreeEvent
    | CheckpointEvent
    | RunFinished,
    Field(discriminator="kind"),
]
# Built once: making an adapter costs milliseconds, validating a line microseconds.
EVENT: TypeAdapter[Event] = TypeAdapter(Event)
