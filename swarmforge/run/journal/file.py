"""The journal file, `events.jsonl`: read, validated, and appended to with or without a sync.

What is durable when: an event `write_many` wrote is visible to readers and survives
its writer being killed as soon as the call returns, but survives a machine crash
only once a later `sync` returns (it says up to which seq); `append` and
`append_many` write and sync, so their events are durable when they return. The
orchestrator writes with `write_many` and leaves the syncing to its group commit
(committer.py), waiting for it only before a side effect that a lost event must not
precede (dispatch.py, recorder.py). One process writes a run's journal at a time
(the orchestrator holds the run's lock); others only read it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from swarmforge import fsutil
from swarmforge.errors import SwarmforgeError
from swarmforge.run.fields import utc_stamp
from swarmforge.run.journal.events import EVENT, Event, TaskEnqueued
from swarmforge.run.jsonl import append_to, load_for_append, read_lines

EVENTS = "events.jsonl"


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
        directory = Path(run_dir)
        if not directory.is_dir():
            directory.mkdir(parents=True)
            fsutil.fsync_dir(str(directory.absolute().parent))
        path = str(directory / EVENTS)
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
