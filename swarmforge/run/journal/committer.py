"""Group commit in the background: a thread that makes a run's journal durable.

The orchestrator writes events as they happen and goes on; this thread fsyncs the
journal whenever something new was written, so one fsync covers every event
written while the previous one ran, and the dispatch loop never stalls on the
disk. What must be durable before a side effect (a dependency's outcome before
its dependent starts, a background worker's claim before it is spawned) waits
for `durable` to reach its seq.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from swarmforge.errors import SwarmforgeError
from swarmforge.run.journal.file import Journal


class Committer:
    """Keeps `durable` (the seq up to which the journal is on disk) moving forward."""

    def __init__(
        self, journal: Journal, wake: Callable[[], None], *, interval: float = 0.005
    ) -> None:
        self.journal = journal
        self.wake = wake  # called after each fsync, from the committer's thread
        # Unless someone waits for it, an fsync follows the previous one after `interval`
        # at the soonest: every fsync is a journal commit of the whole file system, which
        # costs the machine more than the handful of events it would make durable.
        self.interval = interval
        self.durable = journal.sync()
        self.error: SwarmforgeError | None = None
        self._cond = threading.Condition()
        self._stopping = False
        self._urgent = False
        self._idle = False
        self._thread = threading.Thread(target=self._run, name="journal-commit", daemon=True)

    def __enter__(self) -> Committer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join()

    def kick(self, *, urgent: bool = False) -> None:
        """Say that new events were written (and, if `urgent`, that something waits for them)."""
        with self._cond:
            self._urgent = self._urgent or urgent
            if self._idle or urgent:
                # Waking the thread costs a context switch; while it pauses or syncs it
                # looks for new events by itself.
                self._cond.notify_all()

    def check(self) -> None:
        """Raise the error that stopped the committer, if one did."""
        if self.error is not None:
            raise self.error

    def wait(self, seq: int) -> None:
        """Block until every event up to `seq` is durable."""
        with self._cond:
            self._urgent = True
            self._cond.notify_all()
            while self.durable < seq and self.error is None:
                self._cond.wait()
        self.check()

    def _pending(self) -> bool:
        return self.journal.written_seq > self.durable

    def _run(self) -> None:
        while True:
            with self._cond:
                self._idle = True
                while not self._stopping and not self._pending():
                    self._cond.wait()
                self._idle = False
                if not self._pending():
                    return
                if not (self._urgent or self._stopping):
                    self._cond.wait_for(lambda: self._urgent or self._stopping, self.interval)
                self._urgent = False
            try:
                covered = self.journal.sync()
            except SwarmforgeError as exc:
                covered, self.error = self.durable, exc
            with self._cond:
                self.durable = covered
                self._cond.notify_all()
            self.wake()
            if self.error is not None:
                return
