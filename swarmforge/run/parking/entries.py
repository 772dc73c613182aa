"""The lines of the parking ledgers: a task parked, approved or rejected, and when."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from swarmforge.run.fields import Stamp, TaskId
from swarmforge.run.parking.rules import ParkReason


class Entry(BaseModel):
    """What every ledger line has: the task, and when."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: TaskId
    ts: Stamp


class Parked(Entry):
    """A task held until a human approves it."""

    reason: ParkReason


class Approval(Entry):
    """A parked task let run."""

    by: str


class Rejection(Entry):
    """A parked task refused for good."""

    by: str
    note: str | None = None
