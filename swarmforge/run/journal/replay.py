"""Resuming from a journal: every task's last state, from the newest checkpoint on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from swarmforge.errors import CorruptFile
from swarmforge.run.journal.checkpoint import CHECKPOINT, Checkpoint, read_checkpoint
from swarmforge.run.journal.events import (
    CheckpointEvent,
    Event,
    TaskEnqueued,
    TaskParked,
    TaskState,
)
from swarmforge.run.journal.file import EVENTS, Journal, read_events


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
    events, _ = read_events(str(Path(run_dir) / EVENTS))
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
        directory = Path(run_dir)
        raise CorruptFile(
            str(directory / CHECKPOINT),
            None,
            f"seq {saved.seq} is beyond the end of {directory / EVENTS} (seq {len(events)})",
        )
    last = next((e for e in reversed(events) if isinstance(e, CheckpointEvent)), None)
    if saved is not None and (last is None or saved.seq >= last.seq):
        return saved
    return last
