"""The orchestrator's events on their way to the journal: queued from any thread, written
together, made durable by the group commit, and checkpointed every so often.

The orchestrator flushes before any side effect that depends on what it recorded: a task
is journaled running before its worker starts, and done before a dependent starts.

The project's event log (events.py) gets a copy of the run's and its tasks' state
changes (COPIED), with the run id, in one write per flush, after the journal's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from swarmforge.events import EventLog
from swarmforge.run.journal.checkpoint import write_checkpoint
from swarmforge.run.journal.committer import Committer
from swarmforge.run.journal.file import Journal

CHECKPOINT_EVERY = 1000
COPIED = frozenset(("run-started", "run-resumed", "task-state", "task-parked", "run-finished"))
# The journal's field names as the project's log spells them (the rest are kept as they are).
RENAMED = {"id": "task_id", "runId": "run_id", "exitCode": "exit_code"}


def event_copy(run_id: str, fields: dict[str, object]) -> dict[str, object]:
    """A journal event's fields as the project's log records them: with the run id."""
    copy: dict[str, object] = {"run_id": run_id}
    copy.update((RENAMED.get(k, k), v) for k, v in fields.items())
    return copy


class Recorder:
    """Queues the events of an open run and writes them to its journal in groups."""

    def __init__(
        self,
        run_dir: str,
        journal: Journal,
        committer: Committer,
        states: Callable[[], dict[str, str]],
        copy_to: tuple[EventLog, str] | None = None,
    ) -> None:
        self.dir = run_dir
        self.copy_to = copy_to  # the project's event log and the run's id
        self.journal = journal
        self.committer = committer
        self.states = states  # every task's status, for a checkpoint
        self.lock = threading.Lock()
        self.pending: list[tuple[str, dict[str, object]]] = []
        self.since_checkpoint = 0

    def record(self, kind: str, **fields: object) -> None:
        """Queue one event for the next `flush` (safe from worker threads)."""
        with self.lock:
            self.pending.append((kind, fields))

    @property
    def next_seq(self) -> int:
        """The seq the next queued event will get."""
        return self.journal.next_seq + len(self.pending)

    def flush(self) -> None:
        """Write every queued event with one write, and have the committer make them durable."""
        with self.lock:
            if self.pending:
                self.journal.write_many(self.pending)
                self.committer.kick()
                self._copy()
                self.since_checkpoint += len(self.pending)
                self.pending = []
            if self.since_checkpoint >= CHECKPOINT_EVERY:
                self._checkpoint()

    def _copy(self) -> None:
        """Append the copies of the pending events to the project's log, in one write."""
        if self.copy_to is None:
            return
        log, run_id = self.copy_to
        copies = [(k, event_copy(run_id, f)) for k, f in self.pending if k in COPIED]
        if copies:
            log.emit_many(copies)

    def checkpoint(self) -> None:
        """Write checkpoint.json and journal the checkpoint event."""
        with self.lock:
            self._checkpoint()

    def _checkpoint(self) -> None:
        # checkpoint.json must never be ahead of what the journal holds on disk.
        self.committer.wait(self.journal.written_seq)
        states = self.states()
        parked = sorted(t for t, s in states.items() if s == "parked")
        write_checkpoint(self.dir, self.journal.next_seq, states, parked)
        self.journal.write_many([("checkpoint", {"states": states, "parked": parked})])
        self.committer.kick()
        self.since_checkpoint = 0
