"""Parking: which tasks wait for a human, the ledgers of parked and decided tasks, and what
the decisions mean for a level.

The first row that matches decides why a task is parked:

=====  ===================================  ==============
 step  condition                            reason
=====  ===================================  ==============
 1     ``metadata["legal"] is True``        ``legal``
 2     ``metadata["security"] is True``     ``security``
 3     ``metadata["irreversible"] is True`` ``irreversible``
 4     the ``irreversible`` flag            ``irreversible``
 5     ``tier == "T4"``                     ``tier-t4``
 -     otherwise                            not parked
=====  ===================================  ==============

Only the boolean ``true`` counts in metadata: ``"true"``, ``1`` or ``"yes"`` do not.
A spec never gets that far with them: validation refuses a non-boolean value for these
keys, so a misspelt ``true`` is an error rather than a task that runs unattended.
``manual`` is the reason of a task a human parked by hand; no rule here produces it.

The ledgers are the JSONL files `t4-parked.jsonl`, `approvals.jsonl` and
`rejections.jsonl` of the run. A decision needs a parked task; a rejection is final;
repeating a decision is a no-op. An approval lets a parked task run on the next resume.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, TypeAdapter

from swarmforge.errors import SwarmforgeError
from swarmforge.locks import Exclusive
from swarmforge.run.fields import Stamp, TaskId, utc_stamp
from swarmforge.run.jsonl import append_line, load_for_append, read_lines

ParkReason = Literal["tier-t4", "irreversible", "legal", "security", "manual"]
REASONS: tuple[ParkReason, ...] = get_args(ParkReason)
METADATA_KEYS: tuple[ParkReason, ...] = ("legal", "security", "irreversible")  # by precedence

PARKED, APPROVALS, REJECTIONS = "t4-parked.jsonl", "approvals.jsonl", "rejections.jsonl"
LOCK = "ledger.lock"

# -- the rules ---------------------------------------------------------------------------------


class Parkable(Protocol):
    """What park classification reads from a task (TaskSpec and SubtaskSpec have it)."""

    @property
    def metadata(self) -> Mapping[str, Any]: ...

    @property
    def irreversible(self) -> bool: ...

    @property
    def tier(self) -> str: ...


class ParkableTask(Parkable, Protocol):
    """A task that park classification reads, with its id."""

    @property
    def id(self) -> str: ...


def park_reason(task: Parkable) -> ParkReason | None:
    """Why `task` must wait for approval (one of REASONS), or None when it may run."""
    for key in METADATA_KEYS:
        if task.metadata.get(key) is True:
            return key
    if task.irreversible:
        return "irreversible"
    if task.tier == "T4":
        return "tier-t4"
    return None


def waiting(tasks: Iterable[ParkableTask], approved: set[str]) -> dict[str, ParkReason]:
    """The tasks among `tasks` that wait for a decision, with the reason they are parked."""
    found: dict[str, ParkReason] = {}
    for task in tasks:
        reason = park_reason(task)
        if reason is not None and task.id not in approved:
            found[task.id] = reason
    return found


# -- what humans decided -----------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """A human's word on a parked task: it may run (`approved`) or fails for good."""

    task_id: str
    verdict: Literal["approved", "rejected"]


def decisions(
    statuses: Mapping[str, str], approved: set[str], rejected: set[str]
) -> list[Decision]:
    """The decisions to carry out on the parked tasks among `statuses`, in their order."""
    found = []
    for task_id, status in statuses.items():
        if status != "parked":
            continue
        if task_id in rejected:
            found.append(Decision(task_id, "rejected"))
        elif task_id in approved:
            found.append(Decision(task_id, "approved"))
    return found


# -- the ledgers -------------------------------------------------------------------------------


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: TaskId
    ts: Stamp


class Parked(_Entry):
    """A task held until a human approves it."""

    reason: ParkReason


class Approval(_Entry):
    """A parked task let run."""

    by: str


class Rejection(_Entry):
    """A parked task refused for good."""

    by: str
    note: str | None = None


E = TypeVar("E", bound=_Entry)
_PARKED, _APPROVALS, _REJECTIONS = (
    TypeAdapter(Parked),
    TypeAdapter(Approval),
    TypeAdapter(Rejection),
)


def parked(run_dir: str) -> dict[str, ParkReason]:
    """Every parked task of the run, with the reason it was parked."""
    found: dict[str, ParkReason] = {}
    for entry in read_lines(os.path.join(run_dir, PARKED), _PARKED)[0]:
        found.setdefault(entry.id, entry.reason)
    return found


def approved(run_dir: str) -> set[str]:
    """The approved tasks of the run (a rejection, being final, outweighs an approval)."""
    return _ids(os.path.join(run_dir, APPROVALS), _APPROVALS) - rejected(run_dir)


def rejected(run_dir: str) -> set[str]:
    """The rejected tasks of the run."""
    return _ids(os.path.join(run_dir, REJECTIONS), _REJECTIONS)


def park(run_dir: str, task_id: str, reason: str) -> bool:
    """Record that `task_id` is parked for `reason`; False if it already was."""
    if reason not in REASONS:
        raise SwarmforgeError(f"Cannot park task {task_id}: unknown reason '{reason}'.")
    entry = _PARKED.validate_python({"id": task_id, "ts": utc_stamp(), "reason": reason})
    with _locked(run_dir):
        return _append_once(os.path.join(run_dir, PARKED), _PARKED, entry)


def approve(run_dir: str, task_id: str, by: str) -> bool:
    """Let parked task `task_id` run; False if it was already approved."""
    entry = Approval(id=task_id, ts=utc_stamp(), by=by)
    with _locked(run_dir):
        _decidable(run_dir, task_id, "approve", rejected(run_dir), "rejected")
        return _append_once(os.path.join(run_dir, APPROVALS), _APPROVALS, entry)


def reject(run_dir: str, task_id: str, by: str, note: str | None = None) -> bool:
    """Refuse parked task `task_id` for good; False if it was already rejected."""
    entry = Rejection(id=task_id, ts=utc_stamp(), by=by, note=note)
    with _locked(run_dir):
        _decidable(run_dir, task_id, "reject", approved(run_dir), "approved")
        return _append_once(os.path.join(run_dir, REJECTIONS), _REJECTIONS, entry)


def _ids(path: str, adapter: TypeAdapter[E]) -> set[str]:
    return {entry.id for entry in read_lines(path, adapter)[0]}


def _decidable(run_dir: str, task_id: str, verb: str, other: set[str], done: str) -> None:
    run = os.path.basename(os.path.normpath(run_dir))
    if task_id not in parked(run_dir):
        raise SwarmforgeError(f"Run {run}: cannot {verb} task {task_id}: it is not parked.")
    if task_id in other:
        raise SwarmforgeError(f"Run {run}: cannot {verb} task {task_id}: it was already {done}.")


def _append_once(path: str, adapter: TypeAdapter[E], entry: E) -> bool:
    entries, _, size = load_for_append(path, adapter)
    if any(e.id == entry.id for e in entries):
        return False
    append_line(path, entry.model_dump_json().encode() + b"\n", size)
    return True


def _locked(run_dir: str) -> Exclusive:
    """Serialise the read-check-append of decisions; a dead holder's lock dies with it."""
    if not os.path.isdir(run_dir):
        raise SwarmforgeError(f"No run at {run_dir}.")
    return Exclusive(os.path.join(run_dir, LOCK))
