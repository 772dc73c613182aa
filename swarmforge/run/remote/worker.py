"""The planned-run worker: takes tasks from the project's task stream, runs them, reports.

One task at a time, in this order, so that a worker killed at any instant leaves
the task to be delivered again rather than lost or doubled:

1. take a message from a consumer whose label set the worker holds;
2. if its attempt has a result already (an earlier worker died before its
   acknowledgement), acknowledge it and stop there;
3. run the command in its checkout (clone.py), telling the server every
   third of the ack wait that the task is in progress;
4. push an isolated task's branch to the hub; write the result (the first of
   the attempt wins); acknowledge the message; remove the worktree.

`run_once` is one pass; `serve` loops over it. A stop request (the CLI's signal
handlers call `request_stop`) ends the loop once the task in hand is reported; a
second one kills the command and hands the task back for another worker.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from typing import IO

from nats.aio.msg import Msg
from pydantic import ValidationError

from swarmforge import proc
from swarmforge.errors import SwarmforgeError
from swarmforge.git.isolation import Isolation
from swarmforge.net.failure import TransportError
from swarmforge.run.remote.clone import Clone
from swarmforge.run.remote.stream import Offer, Puller, TaskMessage, TaskQueue, TaskResult, tail64
from swarmforge.run.report import TAIL

REFRESH = 2.0  # seconds between two looks at the consumers when idle
SLICE = 0.2  # seconds between two looks at a stop request while a command runs
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


class Stopped(Exception):
    """A second stop request came while a task ran: it goes back to the queue."""


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
        self._child: proc.Started | None = None
        # Where the commands write their output, made once: a file made per task cost
        # about a millisecond each on a busy disk.
        self._output = (tempfile.TemporaryFile(), tempfile.TemporaryFile())  # noqa: SIM115 - closed by close()

    def close(self) -> None:
        """Release the output files."""
        for file in self._output:
            file.close()

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
            with self._checkout(task) as (cwd, iso, problem):
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

    @contextmanager
    def _checkout(self, task: TaskMessage) -> Iterator[tuple[str | None, Isolation | None, str]]:
        """Where the task runs and its worktree, or (None, None, why) when it cannot be made."""
        stack = ExitStack()
        try:
            self.clone.fetch_base(task.runId, task.base)
            if task.isolate:
                iso = stack.enter_context(
                    self.clone.isolated(task.runId, task.taskId, task.base, task.port)
                )
                where: tuple[str | None, Isolation | None, str] = (iso.path, iso, "")
            else:
                where = (self.clone.scratch(task.runId, task.base), None, "")
        except SwarmforgeError as exc:
            stack.close()
            where = (None, None, exc.message)
        try:
            yield where
        finally:
            try:
                stack.close()
            except SwarmforgeError as exc:  # reported already: only the clone is untidy
                self.say(f"cannot remove the worktree of {task.taskId}: {exc.message}")

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
            return self._result(task, None, error=problem)
        if os.path.isabs(task.cwd) or ".." in task.cwd.split("/"):
            return self._result(task, None, error=f"bad cwd {task.cwd!r}")
        cwd = os.path.normpath(os.path.join(checkout, task.cwd))
        extra = {**task.env, "SWARMFORGE_PROJECT": checkout}
        if iso is not None:
            extra |= {"PORT": str(iso.port), "SWARMFORGE_PORT": str(iso.port)}
        code, out, err, error = self._command(task.argv, cwd, extra, progress, every)
        branch = rescued = None
        if iso is not None:
            try:
                rescued = self.clone.push(task.runId, task.taskId, iso)
                branch = iso.branch
            except SwarmforgeError as exc:
                error = exc.message
        return self._result(task, code, error, out, err, cwd, branch, rescued)

    def _result(
        self,
        task: TaskMessage,
        code: int | None,
        error: str | None,
        out: bytes = b"",
        err: bytes = b"",
        cwd: str = "",
        branch: str | None = None,
        rescued: str | None = None,
    ) -> TaskResult:
        return TaskResult(
            runId=task.runId,
            taskId=task.taskId,
            attempt=task.attempt,
            exitCode=code,
            error=error,
            stdout=tail64(out),
            stderr=tail64(err),
            worker=self.name,
            host=self.host,
            cwd=cwd,
            branch=branch,
            rescued=rescued,
        )

    def _command(
        self,
        argv: list[str],
        cwd: str,
        extra: dict[str, str],
        progress: Callable[[], None],
        every: float,
    ) -> tuple[int | None, bytes, bytes, str | None]:
        """Run `argv` to its end: exit code, tails of stdout and stderr, why it did not start.

        In a session of its own, so that Ctrl-C at the worker's terminal reaches the
        worker alone, which then lets the command finish; output goes to files, of
        which only the tails are read.
        """
        out, err = self._output
        for file in (out, err):  # the last task's output, dropped: the files serve each task
            file.seek(0)
            file.truncate()
        try:
            child = proc.start(
                argv,
                cwd=cwd,
                extra=extra,
                stdin=proc.DEVNULL,
                stdout=out.fileno(),
                stderr=err.fileno(),
                session=True,
            )
        except OSError as exc:
            return None, b"", b"", f"cannot run {argv[0]}: {exc.strerror}"
        self._wait(child, progress, every)
        return child.returncode, _tail(out), _tail(err), None

    def _wait(self, child: proc.Started, progress: Callable[[], None], every: float) -> None:
        import subprocess

        told = time.monotonic()
        while True:
            try:
                child.wait(timeout=SLICE)
                return
            except subprocess.TimeoutExpired:
                pass
            if self.stops >= 2:
                _kill_session(child)
                raise Stopped
            if time.monotonic() - told >= every:
                told = time.monotonic()
                self._quietly(progress)  # a lost one costs at worst a redelivery

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


def _tail(file: IO[bytes]) -> bytes:
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - TAIL))
    return file.read()


def _kill_session(child: proc.Started) -> None:
    """End the command and whatever it started (its own session), and reap it."""
    with suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
