"""The journal of a planned run (`events.jsonl`), its checkpoints, and resuming from them.

Every event is one JSON line with `seq` (1, 2, 3, ... with no gap), `ts` and `kind`;
line n holds seq n. What is durable when: an event `write_many` wrote is visible to
readers and survives its writer being killed as soon as the call returns, but
survives a machine crash only once a later `sync` returns (it says up to which
seq); `append` and `append_many` write and sync, so their events are durable when
they return. The orchestrator writes with `write_many` and leaves the syncing to
its group commit (committer.py), waiting for it only before a side effect that a
lost event must not precede (orchestrator.py, recorder.py). One process writes a
run's journal at a time (the orchestrator holds the run's lock); others only read it.

A checkpoint taken at seq S holds every task's state after all events before S:
take it with `write_checkpoint(run_dir, journal.next_seq, ...)`, then append the
`checkpoint` event, which gets seq S. A crash between the two leaves a
checkpoint.json ahead of the journal by one, which resumes correctly.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from swarmforge import fsutil
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.records import read_json_model
from swarmforge.run.fields import Stamp, TaskId, utc_stamp
from swarmforge.run.jsonl import append_to, load_for_append, read_lines
from swarmforge.run.parking.rules import ParkReason
from swarmforge.run.taskgraph import Status

EVENTS, CHECKPOINT = "events.jsonl", "checkpoint.json"


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


class Checkpoint(BaseModel):
    """checkpoint.json: every task's state after all events before `seq`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    seq: int = Field(ge=1)
    states: dict[str, Status]
    parked: list[str]


def _in_sequence(event: Event, line: int) -> str | None:
    return None if event.seq == line else f"seq {event.seq} where {line} was expected"


def read_events(path: str) -> tuple[list[Event], list[str]]:
    """The events of journal `path` (none if missing) and warnings about a torn last line."""
    return read_lines(path, EVENT, _in_sequence)


class Journal:
    """A run's journal opened for appending: the events so far, and a durable `append`."""

    def __init__(
        self, path: str, events: list[Event], warnings: list[str], size: int, *, sole: bool
    ) -> None:
        self.path = path
        self.sole = sole
        self.events = events
        self.warnings = warnings
        self._size = size
        self._enqueued = {e.id for e in events if isinstance(e, TaskEnqueued)}
        self._fd = -1

    def close(self) -> None:
        """Release the descriptor kept for appending."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    @classmethod
    def open(cls, run_dir: str, *, sole: bool = False) -> Journal:
        """Read and validate the run's journal (creating it), cutting off a torn last line.

        `sole`: the caller holds the run's lock, so no other process opens the journal
        for appending, and appends skip the file lock that keeps them apart.
        """
        if not os.path.isdir(run_dir):
            os.makedirs(run_dir)
            fsutil.fsync_dir(os.path.dirname(os.path.abspath(run_dir)))
        path = os.path.join(run_dir, EVENTS)
        events, warnings, size = load_for_append(path, EVENT, _in_sequence)
        return cls(path, events, warnings, size, sole=sole)

    @property
    def next_seq(self) -> int:
        """The seq the next event gets."""
        return len(self.events) + 1

    def append(self, kind: str, **fields: object) -> Event:
        """Validate, write and fsync one event; it is durable when this returns."""
        return self.append_many([(kind, fields)])[0]

    def append_many(self, records: Sequence[tuple[str, Mapping[str, object]]]) -> list[Event]:
        """Validate and write several events with one write and one fsync (a group commit);
        every one of them is durable when this returns."""
        events = self.write_many(records)
        if events:
            self.sync()
        return events

    def write_many(self, records: Sequence[tuple[str, Mapping[str, object]]]) -> list[Event]:
        """Validate and write events with one write, without waiting for the disk: readers
        see them at once and a killed process cannot lose them, but they are durable only
        after the next `sync` (a machine crash could cost them until then)."""
        events: list[Event] = []
        now = utc_stamp()  # one write, one moment
        for kind, fields in records:
            if "seq" in fields or "ts" in fields:
                raise ValueError("seq and ts are stamped by the journal")
            seq = self.next_seq + len(events)
            events.append(EVENT.validate_python({"seq": seq, "ts": now, "kind": kind, **fields}))
        if not events:
            return events
        data = b"".join(e.model_dump_json().encode() + b"\n" for e in events)
        if self._fd < 0:
            # Kept open for the journal's life: an open and close per append cost as much
            # as the fsync itself.
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        try:
            append_to(self._fd, self.path, data, self._size, durable=False, sole=self.sole)
        except OSError as exc:
            raise SwarmforgeError(f"{self.path}: cannot append: {exc.strerror}") from exc
        self._size += len(data)
        self.events.extend(events)
        self._enqueued.update(e.id for e in events if isinstance(e, TaskEnqueued))
        return events

    @property
    def written_seq(self) -> int:
        """The seq of the last event written (durable or not)."""
        return len(self.events)

    def sync(self) -> int:
        """Make every event written so far durable, those read at `open` included; the seq
        up to which they now are.

        Safe to call from another thread while events are being written: what was
        written before the call is covered, anything later waits for the next one.
        """
        covered = self.written_seq
        fd = self._fd
        try:
            if fd >= 0:
                os.fsync(fd)
            elif covered:
                # Nothing written yet, but a writer killed before its sync may have left
                # the events read at open in memory only. A descriptor of our own: the
                # writing thread may be opening `_fd` right now.
                own = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    os.fsync(own)
                finally:
                    os.close(own)
        except OSError as exc:
            raise SwarmforgeError(f"{self.path}: cannot sync: {exc.strerror}") from exc
        return covered

    def was_enqueued(self, task_id: str) -> bool:
        """True if the journal holds a task-enqueued event for `task_id`."""
        return task_id in self._enqueued


def write_checkpoint(
    run_dir: str, seq: int, states: Mapping[str, str], parked: Iterable[str]
) -> Checkpoint:
    """Atomically write checkpoint.json: the states after every event before `seq`."""
    checkpoint = Checkpoint.model_validate(
        {"seq": seq, "states": dict(states), "parked": list(parked)}
    )
    data = checkpoint.model_dump_json(indent=1).encode() + b"\n"
    fsutil.atomic_write(os.path.join(run_dir, CHECKPOINT), data)
    return checkpoint


def read_checkpoint(run_dir: str) -> Checkpoint | None:
    """The run's checkpoint.json, or None if it has none; CorruptFile if it is damaged."""
    return read_json_model(os.path.join(run_dir, CHECKPOINT), Checkpoint)


def resume_states(run_dir: str, *, sole: bool = False) -> tuple[dict[str, str], Journal]:
    """Every task's last journaled state, and the journal opened for appending.

    Starts from the most recent checkpoint (checkpoint.json, or the last checkpoint
    event if that is newer) and applies each later task-enqueued, task-state and
    task-parked event in order. A task still `running` here may have lost its
    worker: only the caller knows which workers live on (background ones do), so
    demoting the orphans to `ready` is the caller's job.
    """
    journal = Journal.open(run_dir, sole=sole)
    return replay(run_dir, journal.events), journal


def read_states(run_dir: str) -> tuple[dict[str, str], list[Event]]:
    """Every task's last journaled state and the events, without writing anything: a torn
    last line is skipped here, and left for the orchestrator to cut when it resumes."""
    events, _ = read_events(os.path.join(run_dir, EVENTS))
    return replay(run_dir, events), events


def replay(run_dir: str, events: Sequence[Event]) -> dict[str, str]:
    """The states after `events`: from the newest checkpoint on, the last word per task."""
    base = _base(run_dir, events)
    states: dict[str, str] = dict(base.states) if base else {}
    for event in events[base.seq - 1 if base else 0 :]:
        if isinstance(event, TaskState | TaskEnqueued):
            states[event.id] = event.status
        elif isinstance(event, TaskParked):
            states[event.id] = "parked"
    return states


def _base(run_dir: str, events: Sequence[Event]) -> Checkpoint | CheckpointEvent | None:
    """The checkpoint to resume from: the newer of checkpoint.json and the last event."""
    saved = read_checkpoint(run_dir)
    if saved is not None and saved.seq > len(events) + 1:
        # The journal lost events the checkpoint has seen: replaying would skip new ones.
        raise CorruptFile(
            os.path.join(run_dir, CHECKPOINT),
            None,
            f"seq {saved.seq} is beyond the end of {os.path.join(run_dir, EVENTS)} "
            f"(seq {len(events)})",
        )
    last = next((e for e in reversed(events) if isinstance(e, CheckpointEvent)), None)
    if saved is not None and (last is None or saved.seq >= last.seq):
        return saved
    return last
