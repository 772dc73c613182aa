"""The ledgers of parked and decided tasks, and the only ways to add to them.

The ledgers are the JSONL files `t4-parked.jsonl`, `approvals.jsonl` and
`rejections.jsonl` of the run. A decision needs a parked task; a rejection is final;
repeating a decision is a no-op. An approval lets a parked task run on the next resume.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

from pydantic import TypeAdapter

from swarmforge.errors import SwarmforgeError
from swarmforge.locks import Exclusive
from swarmforge.run.fields import utc_stamp
from swarmforge.run.jsonl import append_line, load_for_append, read_lines
from swarmforge.run.parking.entries import Approval, Entry, Parked, Rejection
from swarmforge.run.parking.rules import REASONS, ParkReason

PARKED, APPROVALS, REJECTIONS = "t4-parked.jsonl", "approvals.jsonl", "rejections.jsonl"
LOCK = "ledger.lock"

E = TypeVar("E", bound=Entry)
_PARKED, _APPROVALS, _REJECTIONS = (
    TypeAdapter(Parked),
    TypeAdapter(Approval),
    TypeAdapter(Rejection),
)


def parked(run_dir: str) -> dict[str, ParkReason]:
    """Every parked task of the run, with the reason it was parked."""
    found: dict[str, ParkReason] = {}
    for entry in read_lines(_ledger(run_dir, PARKED), _PARKED)[0]:
        found.setdefault(entry.id, entry.reason)
    return found


def approved(run_dir: str) -> set[str]:
    """The approved tasks of the run (a rejection, being final, outweighs an approval)."""
    return _ids(_ledger(run_dir, APPROVALS), _APPROVALS) - rejected(run_dir)


def rejected(run_dir: str) -> set[str]:
    """The rejected tasks of the run."""
    return _ids(_ledger(run_dir, REJECTIONS), _REJECTIONS)


def park(run_dir: str, task_id: str, reason: str) -> bool:
    """Record that `task_id` is parked for `reason`; False if it already was."""
    if reason not in REASONS:
        raise SwarmforgeError(f"Cannot park task {task_id}: unknown reason '{reason}'.")
    entry = _PARKED.validate_python({"id": task_id, "ts": utc_stamp(), "reason": reason})
    with _locked(run_dir):
        return _append_once(_ledger(run_dir, PARKED), _PARKED, entry)


def approve(run_dir: str, task_id: str, by: str) -> bool:
    """Let parked task `task_id` run; False if it was already approved."""
    entry = Approval(id=task_id, ts=utc_stamp(), by=by)
    with _locked(run_dir):
        _decidable(run_dir, task_id, "approve", rejected(run_dir), "rejected")
        return _append_once(_ledger(run_dir, APPROVALS), _APPROVALS, entry)


def reject(run_dir: str, task_id: str, by: str, note: str | None = None) -> bool:
    """Refuse parked task `task_id` for good; False if it was already rejected."""
    entry = Rejection(id=task_id, ts=utc_stamp(), by=by, note=note)
    with _locked(run_dir):
        _decidable(run_dir, task_id, "reject", approved(run_dir), "approved")
        return _append_once(_ledger(run_dir, REJECTIONS), _REJECTIONS, entry)


def _ledger(run_dir: str, name: str) -> str:
    """The path of ledger file `name` of the run in `run_dir`."""
    return str(Path(run_dir) / name)


def _ids(path: str, adapter: TypeAdapter[E]) -> set[str]:
    return {entry.id for entry in read_lines(path, adapter)[0]}


def _decidable(run_dir: str, task_id: str, verb: str, other: set[str], done: str) -> None:
    run = Path(os.path.normpath(run_dir)).name
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
    directory = Path(run_dir)
    if not directory.is_dir():
        raise SwarmforgeError(f"No run at {run_dir}.")
    return Exclusive(str(directory / LOCK))
