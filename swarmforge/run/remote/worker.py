"""The planned-run worker: takes tasks from the project's task stream, runs them, reports.

One task at a time, in this order, so that a worker killed at any instant leaves
the task to be delivered again rather than lost or doubled:

1. take a message from a consumer whose label set the worker holds;
2. if its attempt has a result already (an earlier worker died before its
   acknowledgement), acknowledge it and stop there;
3. run the command in its checkout (checkout.py), telling the server every
   third of the ack wait that the task is in progress;
4. push an isolated task's branch to the hub; write the result (the first of
   the attempt wins); acknowledge the message; remove the worktree.

`run_once` is one pass; `serve` loops over it. A stop request (the CLI's signal
handlers call `request_stop`) ends the loop once the task in hand is reported; a
second one kills the command and hands the task back for another worker.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nats.aio.msg import Msg
from pydantic import ValidationError

from swarmforge import tagging
from swarmforge.errors import SwarmforgeError
from swarmforge.git.isolation import Isolation
from swarmforge.net.failure import TransportError
from swarmforge.proc import popen
from swarmforge.run.remote.checkout import checkout
from swarmforge.run.remote.clone import Clone
from swarmforge.run.remote.command import Commands, Stopped
from swarmforge.run.remote.messages import TaskMessage, TaskResult, result_of
from swarmforge.run.remote.puller import Puller
from swarmforge.run.remote.taskqueue import Offer, TaskQueue

REFRESH = 2.0  # seconds between two looks at the consumers when idle
RETRY = 1.0  # seconds before trying the server again


@dataclass(frozen=True)
class Handled:
    """What became of one message: `outcome` is done, failed, already reported, handed
    back or dropped."""

    run_id: str
    task_id: str
    attempt: int
    outcome: str
    exit_code: int | None = None
    detail: str = ""
    delivered: int = 1  # how many times the server has delivered this message


class Worker:
    """Runs the tasks of planned runs that its labels allow, from `queue`, in `clone`."""

    def __init__(
        self,
        queue: TaskQueue,
        clone: Clone,
        *,
        labels: frozenset[str],
        name: str,
        host: str,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.queue = queue
        self.clone = clone
        self.labels = labels
        self.name = name
        self.host = host
        self.say = say or (lambda m: None)
        self.stops = 0
        self._pullers: dict[str, tuple[Offer, Puller]] = {}
        self._listed = 0.0
        self._next = 0  # which puller the next pass starts with
        self._child: popen.Started | None = None
        self._commands = Commands(lambda: self.stops >= 2, self._quietly)

    def close(self) -> None:
        """Release the output files."""
        self._commands.close()

    def request_stop(self) -> None:
        """Stop after the task in hand (safe from a signal handler); the second time, now."""
        self.stops += 1

    # -- the loop -----------------------------------------------------------------------------

    def serve(self, max_tasks: int | None, on_handled: Callable[[Handled], None]) -> int:
        """Take tasks until asked to stop or `max_tasks` were handled; how many were."""
        handled = 0
        while not self.stops and (max_tasks is None or handled < max_tasks):
            try:
                done = self.run_once()
            except TransportError as exc:
                self.say(f"{exc}; trying again")
                self._pullers.clear()
                time.sleep(RETRY)
                continue
            if done is not None:
                handled += 1
                on_handled(done)
        return handled

    def run_once(self, wait: float = 1.0) -> Handled | None:
        """Take and handle at most one message, waiting up to about `wait` seconds for one."""
        pullers = self._offers()
        if not pullers:
            time.sleep(min(wait, REFRESH))
            return None
        share = max(wait / len(pullers), 0.05)
        for i in range(len(pullers)):
            offer, puller = pullers[(self._next + i) % len(pullers)]
            if self.stops:
                return None
            msgs = puller.fetch(1, share)
            if msgs:
                self._next = (self._next + i + 1) % len(pullers)
                return self.handle(offer, puller, msgs[0])
        self._listed = min(self._listed, time.monotonic() - REFRESH / 2)  # idle: look sooner
        return None

    def _offers(self) -> list[tuple[Offer, Puller]]:
        """The consumers this worker may take from, bound (looked up every REFRESH s)."""
        if time.monotonic() - self._listed >= REFRESH or not self._pullers:
            self._listed = time.monotonic()
            for offer in self.queue.offers():
                if offer.labels <= self.labels and offer.name not in self._pullers:
                    self._pullers[offer.name] = (offer, self.queue.pull(offer.name))
        return sorted(self._pullers.values(), key=lambda pair: pair[0].name)

    # -- one task -----------------------------------------------------------------------------

    def handle(self, offer: Offer, puller: Puller, msg: Msg) -> Handled:
        """Run the task of `msg` unless its attempt was reported; report and acknowledge."""
        delivered = msg.metadata.num_delivered or 1
        try:
            task = TaskMessage.model_validate_json(msg.data)
        except ValidationError as exc:
            puller.term(msg)  # it can never run: delivering it again would not help
            detail = f"malformed task message: {exc.errors()[0]['msg']}"
            return Handled("?", "?", 0, "dropped", detail=detail, delivered=delivered)
        if self.queue.result(task.runId, task.taskId, task.attempt) is not None:
            puller.ack(msg)
            return Handled(task.runId, task.taskId, task.attempt, "already reported", None)
        try:
            with checkout(self.clone, task, self.say) as (cwd, iso, problem):
                progress = lambda: puller.in_progress(msg)  # noqa: E731
                result = self._execute(task, cwd, iso, problem, progress, offer.ack_wait / 3)
                first = self._retry(lambda: self.queue.put_result(result))
                self._retry(lambda: puller.ack(msg))
        except Stopped:
            self._quietly(lambda: puller.nak(msg))
            return Handled(task.runId, task.taskId, task.attempt, "handed back")
        outcome = ("done" if result.ok else "failed") if first else "already reported"
        detail = result.error or ""
        return Handled(
            task.runId, task.taskId, task.attempt, outcome, result.exitCode, detail, delivered
        )

    def _execute(
        self,
        task: TaskMessage,
        checkout: str | None,
        iso: Isolation | None,
        problem: str,
        progress: Callable[[], None],
        every: float,
    ) -> TaskResult:
        """Run the task's command in `checkout` and push its branch; its result."""
        if checkout is None:
            return result_of(task, self.name, self.host, None, error=problem)
        if Path(task.cwd).is_absolute() or ".." in task.cwd.split("/"):
            return result_of(task, self.name, self.host, None, error=f"bad cwd {task.cwd!r}")
        cwd = os.path.normpath(Path(checkout) / task.cwd)
        extra = {**task.env, tagging.PROJECT_TAG: checkout, tagging.SCOPE_TAG: tagging.PLANNED_RUN}
        if iso is not None:
            extra |= {"PORT": str(iso.port), "SWARMFORGE_PORT": str(iso.port)}
        code, out, err, error = self._commands.run(task.argv, cwd, extra, progress, every)
        branch = rescued = None
        if iso is not None:
            try:
                rescued = self.clone.push(task.runId, task.taskId, iso)
                branch = iso.branch
            except SwarmforgeError as exc:
                error = exc.message
        return result_of(task, self.name, self.host, code, error, out, err, cwd, branch, rescued)

    def _retry(self, step: Callable[[], bool | None]) -> bool:
        """`step`, tried again while the server is away (until a second stop request)."""
        while True:
            try:
                return bool(step())
            except TransportError as exc:
                if self.stops >= 2:
                    raise Stopped from None
                self.say(f"{exc}; trying again")
                time.sleep(RETRY)

    def _quietly(self, step: Callable[[], None]) -> None:
        try:
            step()
        except TransportError as exc:
            self.say(str(exc))
