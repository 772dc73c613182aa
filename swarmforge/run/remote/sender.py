"""Command tasks sent to workers on other hosts (`swarmforge run --workers`).

The orchestrator keeps the journal; this module only publishes and listens. A
task that goes to a worker is claimed with a new attempt (`attempt:<n>` as the
reason of its `running` state), published once that claim is durable, and ends
with the first result of that attempt, which the listener thread hands to the
loop as a local worker thread would (an `Ended` on the `done` queue), its report
written like a local task's. A result for a task that is not running here, or for
another attempt, is ignored and said so: the journal shows one outcome per task.

A worker that vanishes leaves its message unacknowledged, and the server gives
it to another worker after the ack wait: the same attempt, whose first result
still counts. A resumed orchestrator waits again for the attempt its journal
names (`rejoin`): it looks up that attempt's result, which may have come while
nobody listened, and otherwise publishes the attempt again unless its message is
still queued (the server would drop a repeat within its duplicate window anyway).

The run's base commit (base.py) is pushed to the hub when the run opens, before
anything is journaled.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from swarmforge.config.transportsettings import TransportSettings
from swarmforge.errors import SwarmforgeError
from swarmforge.net.failure import TransportError
from swarmforge.net.transport import Transport
from swarmforge.run.external import Ended
from swarmforge.run.journal.events import Event, TaskState
from swarmforge.run.levels import Flight
from swarmforge.run.outcome import Outcome
from swarmforge.run.remote.attempts import ATTEMPT, attempt_of
from swarmforge.run.remote.base import head_commit, push_base
from swarmforge.run.remote.messages import TaskMessage, TaskResult
from swarmforge.run.remote.outcomes import write_outcome
from swarmforge.run.remote.taskqueue import ACK_WAIT, TaskQueue


@dataclass(frozen=True)
class Workers:
    """How a run sends its command tasks to workers: the project's `[transport]`, and how
    long a worker may stay silent before its task goes to another (`ack_wait`, seconds)."""

    settings: TransportSettings
    ack_wait: float = ACK_WAIT


class Remote:
    """The workers' side of one open run: publishing, and the thread that takes results."""

    def __init__(
        self,
        root: str,
        run_id: str,
        workers: Workers,
        events: Sequence[Event],
        say: Callable[[str], None],
    ) -> None:
        self.root = root
        self.run_id = run_id
        self.workers = workers
        self.say = say
        self.transport = Transport.from_settings(workers.settings, root)
        self.queue = TaskQueue(self.transport)
        self.base = ""
        self.attempts: dict[str, int] = {}  # the last attempt journaled, per task
        for event in events:
            found = attempt_of(event.reason) if isinstance(event, TaskState) else None
            if found is not None and isinstance(event, TaskState):
                self.attempts[event.id] = max(found, self.attempts.get(event.id, 0))
        self.lock = threading.Lock()
        self.waiting: dict[str, tuple[Flight, int]] = {}  # task -> (its flight, attempt)
        self.consumers: set[str] = set()
        self.closing = threading.Event()
        self.thread: threading.Thread | None = None
        self.hand_over: Callable[[Ended], None] = lambda ended: None

    def open(self) -> None:
        """Connect, make the streams, push the base commit: before anything is journaled."""
        hub = self.workers.settings.hub
        if hub is None:
            raise SwarmforgeError(
                "--workers needs `hub` in [transport] of swarmforge/swarmforge.toml: "
                "the git repository the workers fetch from and push to."
            )
        base = head_commit(self.root)
        self.transport.connect()
        self.queue.ensure()
        push_base(self.root, hub, self.run_id, base)
        self.base = base

    def start(self, done: queue.Queue[Ended], wake: Callable[[], None], reports: str) -> None:
        """Listen for the run's results, handing each ending to `done` (then `wake`)."""
        self.reports = reports

        def hand_over(ended: Ended) -> None:
            done.put(ended)
            wake()

        self.hand_over = hand_over
        results = self.queue.results(self.run_id)
        self.thread = threading.Thread(
            target=self._listen, args=(results,), name="swarmforge-results", daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        """Stop listening and disconnect; the results consumer goes when nothing is awaited."""
        self.closing.set()
        if self.thread is not None:
            self.thread.join()
        if not self.waiting:
            # Should this fail, the server removes it once it has been idle long enough.
            with contextlib.suppress(TransportError):
                self.queue.drop_results(self.run_id)
        self.transport.close()

    # -- sending ------------------------------------------------------------------------------

    def claim(self, task_id: str) -> str:
        """A new attempt of `task_id`, as the reason its `running` state is journaled with."""
        attempt = self.attempts.get(task_id, 0) + 1
        self.attempts[task_id] = attempt
        return f"{ATTEMPT}{attempt}"

    def dispatch(self, flight: Flight, port: int | None) -> None:
        """Publish the claimed attempt of `flight`'s task (its claim durable by now)."""
        attempt = self.attempts[flight.task_id]
        with self.lock:
            self.waiting[flight.task_id] = (flight, attempt)
        self._publish(self._message(flight, attempt, port))

    def rejoin(self, flight: Flight, attempt: int, port: int | None) -> None:
        """Wait again for `attempt` of a task journaled running when the orchestrator died."""
        self.attempts[flight.task_id] = max(attempt, self.attempts.get(flight.task_id, 0))
        with self.lock:
            self.waiting[flight.task_id] = (flight, attempt)
        found = self.queue.result(self.run_id, flight.task_id, attempt)
        if found is not None:
            self.settle(found)
            return
        message = self._message(flight, attempt, port)
        if not self.queue.waiting(message):
            self._publish(message)

    def _message(self, flight: Flight, attempt: int, port: int | None) -> TaskMessage:
        task = flight.level.tasks[flight.task_id]
        assert task.command is not None
        return TaskMessage(
            runId=self.run_id,
            taskId=task.id,
            attempt=attempt,
            argv=list(task.command),
            env={"SWARMFORGE_RUN_ID": self.run_id, "SWARMFORGE_TASK": task.id},
            isolate=task.isolate,
            base=self.base,
            port=port if task.isolate else None,
            labels=list(task.labels),
        )

    def _publish(self, message: TaskMessage) -> None:
        labels = "_".join(message.labels)
        if labels not in self.consumers:
            self.queue.ensure_consumer(message.labels, self.workers.ack_wait)
            self.consumers.add(labels)
        self.queue.publish(message)

    # -- results ------------------------------------------------------------------------------

    def _listen(self, results: object) -> None:
        from swarmforge.run.remote.puller import Puller

        assert isinstance(results, Puller)
        while not self.closing.is_set():
            try:
                msgs = results.fetch(1, 0.5)  # a batch would wait for its last message
            except TransportError as exc:
                self.say(f"{exc}; trying again")
                time.sleep(1.0)
                continue
            for msg in msgs:
                try:
                    found = TaskResult.model_validate_json(msg.data)
                except ValidationError as exc:
                    self.say(f"ignored a malformed result: {exc.errors()[0]['msg']}")
                else:
                    self.settle(found)
                # Should this fail, the result comes again, and is then ignored.
                with contextlib.suppress(TransportError):
                    results.ack(msg)

    def settle(self, result: TaskResult) -> None:
        """End the waiting attempt `result` reports; ignore (and say) any other result."""
        with self.lock:
            flight, attempt = self.waiting.get(result.taskId, (None, 0))
            if flight is None or attempt != result.attempt or result.runId != self.run_id:
                why = "it is not running" if flight is None else f"it waits for attempt {attempt}"
                self.say(
                    f"ignored a result of task {result.taskId} (attempt {result.attempt}, "
                    f"from {result.worker}): {why}"
                )
                return
            del self.waiting[result.taskId]
        try:
            outcome: Outcome | BaseException = write_outcome(self.reports, flight, result)
        except (SwarmforgeError, OSError) as exc:  # the task fails; the listener goes on
            outcome = exc
        self.hand_over(Ended(flight, outcome))
