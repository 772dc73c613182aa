"""Append-only JSONL files of a run: the shared line reader and appender, and the park ledgers.

A line is committed by one write(2) of the whole line, newline included, then fsync.
So a crash can only leave the last line torn: it is skipped with a warning, and cut
off before the next append. A bad line anywhere else is corruption and is refused.

The park ledgers are `t4-parked.jsonl`, `approvals.jsonl` and `rejections.jsonl`.
A decision needs a parked task; a rejection is final; repeating a decision is a no-op.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from typing import Annotated, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, StringConstraints, TypeAdapter, ValidationError

from swarmforge import fsutil
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.locks import Exclusive, ExclusiveFd
from swarmforge.records import describe

T = TypeVar("T")
Check = Callable[[T, int], "str | None"]

PARKED, APPROVALS, REJECTIONS = "t4-parked.jsonl", "approvals.jsonl", "rejections.jsonl"
LOCK = "ledger.lock"

Stamp = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")]
ParkReason = Literal["tier-t4", "irreversible", "legal", "security", "manual"]
TaskId = Annotated[str, StringConstraints(min_length=1)]


_second: tuple[int, str] = (-1, "")


def utc_stamp(now: float | None = None) -> str:
    """An ISO-8601 UTC instant with milliseconds (2026-06-15T14:05:31.123Z)."""
    global _second
    now = time.time() if now is None else now
    whole = int(now // 1)
    if _second[0] != whole:
        # strftime costs more than the rest of a journal event; a run stamps thousands
        # of events a second, so the seconds part is made once per second.
        _second = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{_second[1]}.{int(now % 1 * 1000):03d}Z"


# -- the line reader and appender, shared with the journal ------------------------------------


def parse_lines(
    path: str,
    data: bytes,
    adapter: TypeAdapter[T],
    check: Check[T] | None = None,
    fate: str = "skipped",
) -> tuple[list[T], list[str], int]:
    """The records of JSONL `data`, warnings about a torn last line, and where valid data ends.

    `check(record, line)` returns a problem with a well-formed record or None; such a
    problem is corruption even on the last line, because no crash produces it.
    """
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the data ends with a newline
    end = len(data) - len(tail)
    # Validation makes an object per line and never a cycle; pausing the cyclic
    # collector, which would rescan the growing heap, halves the time of a long read.
    collecting = gc.isenabled()
    gc.disable()
    try:
        records, torn = _records(path, lines, adapter, check, not tail)
    finally:
        if collecting:
            gc.enable()
    warnings = []
    if torn is not None:
        end -= len(lines[-1]) + 1
        warnings.append(f"{path}, line {len(lines)}: torn last line ({torn}), {fate}")
    if tail:
        warnings.append(f"{path}, line {len(lines) + 1}: torn last line (no newline), {fate}")
    return records, warnings, end


def _records(
    path: str, lines: list[bytes], adapter: TypeAdapter[T], check: Check[T] | None, tear: bool
) -> tuple[list[T], str | None]:
    """Validate complete lines; if `tear`, a bad last line is torn (its problem returned)."""
    records: list[T] = []
    for number, line in enumerate(lines, 1):
        try:
            record = adapter.validate_json(line)
        except ValidationError as exc:
            # A crash that cuts a multi-page write can leave garbage ending in a newline.
            if tear and number == len(lines):
                return records, describe(exc)
            raise CorruptFile(path, number, describe(exc)) from None
        problem = check(record, number) if check is not None else None
        if problem:
            raise CorruptFile(path, number, problem)
        records.append(record)
    return records, None


def read_lines(
    path: str, adapter: TypeAdapter[T], check: Check[T] | None = None
) -> tuple[list[T], list[str]]:
    """The records of JSONL file `path` (none if it is missing) and warnings; never writes."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return [], []
    records, warnings, _ = parse_lines(path, data, adapter, check)
    return records, warnings


def load_for_append(
    path: str, adapter: TypeAdapter[T], check: Check[T] | None = None
) -> tuple[list[T], list[str], int]:
    """Read (creating) JSONL file `path` and cut a torn last line off; records, warnings, size."""
    created = not os.path.exists(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        # Appenders hold this lock while they write, so a torn tail seen under it is a
        # crash's leftover, never a line another process is still writing.
        with ExclusiveFd(fd), open(fd, "rb", closefd=False) as f:
            data = f.read()
            records, warnings, end = parse_lines(path, data, adapter, check, "cut off")
            if end < len(data):
                os.ftruncate(fd, end)
                os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsutil.fsync_dir(os.path.dirname(path) or ".")
    return records, warnings, end


def append_line(path: str, line: bytes, size: int) -> None:
    """Append one newline-terminated `line` to `path`, expected to hold `size` bytes; durable."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    try:
        append_to(fd, path, line, size)
    except OSError as exc:
        raise SwarmforgeError(f"{path}: cannot append: {exc.strerror}") from exc
    finally:
        os.close(fd)


def append_to(
    fd: int, path: str, data: bytes, size: int, *, durable: bool = True, sole: bool = False
) -> None:
    """Append `data` (whole lines) through `fd`, open with O_APPEND on `path`; durable unless
    told otherwise (then the caller fsyncs `fd` later). `sole`: the caller is the only
    process that reads or writes the file through the lock (the lock is skipped)."""
    if sole:
        _append(fd, path, data, size, durable)
    else:
        with ExclusiveFd(fd):
            _append(fd, path, data, size, durable)


def _append(fd: int, path: str, data: bytes, size: int, durable: bool) -> None:
    if os.fstat(fd).st_size != size:
        raise SwarmforgeError(f"{path} changed under its writer; is another process writing it?")
    written = os.write(fd, data)
    if written != len(data):
        # A short write (a full disk) must not leave a fragment for the next line to join.
        os.ftruncate(fd, size)
        raise SwarmforgeError(f"{path}: only {written} of {len(data)} bytes could be written.")
    if durable:
        os.fsync(fd)


# -- the park ledgers --------------------------------------------------------------------------


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


def parked(run_dir: str) -> dict[str, str]:
    """Every parked task of the run, with the reason it was parked."""
    found: dict[str, str] = {}
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
    if reason not in get_args(ParkReason):
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
