"""Planned-run tasks for workers on other hosts: the task stream, the results, their messages.

Two JetStream stores per project, next to the mail stream of mailstream.py:

- The task stream `SWARMFORGE-<project>-TASKS`: file storage, work-queue retention.
  A task goes to `swarmforge.<project>.task.<labels>.<runId>.<taskId>`, where
  `<labels>` spells the set of labels the task requires (`_` for none). Each label
  set has one durable pull consumer, `tasks-<labels>`, shared by every worker that
  holds all of those labels; a worker lists the consumers and pulls from those it
  satisfies. The orchestrator makes the consumer before it publishes, with the ack
  wait after which the task of a silent (dead) worker is delivered again. The
  message id `<runId>:<taskId>:<attempt>` makes the server drop an attempt
  published twice (by a resumed orchestrator) within the duplicate window.
- The results bucket `swarmforge-<project>-results`: a key-value bucket, which is a
  stream with limits retention, keyed `<runId>.<taskId>.<attempt>`. A worker writes a
  result with `create`, so the first result of an attempt wins, and before running a
  message it asks whether its attempt has a result already: a worker killed after its
  result but before its acknowledgement never makes the task run again. The
  orchestrator reads a run's results through a durable consumer of the bucket's stream
  (`results-<runId>`), and a resumed one also looks up the attempts it waits for.

Results carry the last 64 KiB of stdout and stderr in base64 (a task's output is
bytes, not text).
"""

from __future__ import annotations

import base64
import contextlib
import re
from dataclasses import dataclass
from typing import Annotated

from nats.aio.msg import Msg
from nats.js import JetStreamContext, api
from nats.js.errors import (
    BucketNotFoundError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
    NotFoundError,
)
from nats.js.kv import KeyValue
from pydantic import BaseModel, ConfigDict, Field

from swarmforge.net.connection import REQUEST_TIMEOUT
from swarmforge.net.mailstream import DUPLICATE_WINDOW, MSG_ID_HEADER
from swarmforge.net.subjects import SUBJECT_ROOT, token
from swarmforge.net.transport import Transport
from swarmforge.run.report import TAIL
from swarmforge.run.spec import TaskId, label_problem, refuse

ACK_WAIT = 30.0  # seconds a worker may stay silent before its task goes to another
MAX_CONSUMERS = 4096  # label sets (the server's default cap would be 1,000)
RESULTS_ACK_WAIT = 30.0
RESULTS_IDLE = 86400.0  # a run's results consumer unused this long is removed by the server
NO_LABELS = "_"
_RUN_ID = re.compile(r"run-[0-9a-f]{16}\Z")
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?\Z")


RunId = Annotated[str, refuse(lambda v: None if _RUN_ID.match(v) else f"bad run id {v!r}")]
Label = Annotated[str, refuse(label_problem)]
Commit = Annotated[str, refuse(lambda v: None if _SHA.match(v) else f"bad commit {v!r}")]


class TaskMessage(BaseModel):
    """One attempt of one task, as a worker receives it."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    runId: RunId
    taskId: TaskId
    attempt: int = Field(ge=1)
    argv: list[str] = Field(min_length=1)
    env: dict[str, str]  # added to the worker's environment
    cwd: str = ""  # where the command runs, relative to the checkout (its root: "")
    isolate: bool
    base: Commit  # the commit the checkout starts from, on the hub
    port: int | None = None  # an isolated task's PORT
    labels: list[Label] = Field(default_factory=list)


class TaskResult(BaseModel):
    """How one attempt of one task ended on a worker."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    runId: RunId
    taskId: TaskId
    attempt: int = Field(ge=1)
    exitCode: int | None
    error: str | None = None  # the command could not run, or its branch not be pushed
    stdout: str = ""  # base64 of the last TAIL bytes
    stderr: str = ""
    worker: str  # the worker's name (its labels and host)
    host: str
    cwd: str  # where it ran, on the worker's host
    branch: str | None = None  # pushed to the hub (isolated tasks)
    rescued: str | None = None  # uncommitted work, pushed to the hub under this ref

    @property
    def ok(self) -> bool:
        """Done (exit 0 and nothing went wrong around it) rather than failed."""
        return self.exitCode == 0 and self.error is None

    def output(self) -> tuple[bytes, bytes]:
        """The tails of stdout and stderr."""
        return base64.b64decode(self.stdout), base64.b64decode(self.stderr)


def tail64(data: bytes) -> str:
    """The last TAIL bytes of `data`, in base64, for a TaskResult."""
    return base64.b64encode(data[-TAIL:]).decode("ascii")


def labels_token(labels: list[str] | frozenset[str]) -> str:
    """The subject token of a label set: its labels sorted and joined by `_` (which no
    label holds), or `_` for none."""
    return "_".join(sorted(labels)) or NO_LABELS


def labels_of(found: str) -> frozenset[str]:
    """The label set a token spells (`labels_token` reversed)."""
    return frozenset() if found == NO_LABELS else frozenset(found.split("_"))


def stream_name(project: str) -> str:
    """The project's task stream."""
    return f"SWARMFORGE-{project}-TASKS"


def bucket_name(project: str) -> str:
    """The project's results bucket."""
    return f"swarmforge-{project}-results"


def task_subject(project: str, labels: list[str], run_id: str, task_id: str) -> str:
    """Where one task of a run waits for a worker with `labels`."""
    return f"{_task_prefix(project, labels)}.{run_id}.{token(task_id)}"


def _task_prefix(project: str, labels: list[str] | frozenset[str]) -> str:
    return f"{SUBJECT_ROOT}.{project}.task.{labels_token(labels)}"


def message_id(run_id: str, task_id: str, attempt: int) -> str:
    """The id under which the server drops an attempt published twice."""
    return f"{run_id}:{task_id}:{attempt}"


def result_key(run_id: str, task_id: str, attempt: int) -> str:
    """The key of an attempt's result in the results bucket."""
    return f"{run_id}.{token(task_id)}.{attempt}"


@dataclass(frozen=True)
class Offer:
    """A label set's consumer, as a worker finds it."""

    name: str
    labels: frozenset[str]
    ack_wait: float


class Puller:
    """A pull subscription on a durable consumer; messages come back as nats-py's."""

    def __init__(self, transport: Transport, name: str, sub: JetStreamContext.PullSubscription):
        self.transport = transport
        self.name = name
        self._sub = sub

    def fetch(self, batch: int, timeout: float) -> list[Msg]:
        """Up to `batch` messages within `timeout` seconds; [] when none came."""
        from nats.errors import TimeoutError as NatsTimeout

        async def take() -> list[Msg]:
            try:
                return await self._sub.fetch(batch, timeout=timeout)
            except NatsTimeout:
                return []

        return self.transport.call(take(), f"fetch from {self.name}", timeout + REQUEST_TIMEOUT)

    def ack(self, msg: Msg) -> None:
        """Acknowledge `msg`, waiting for the server's confirmation."""
        self.transport.call(msg.ack_sync(timeout=REQUEST_TIMEOUT), "acknowledge a task")

    def in_progress(self, msg: Msg) -> None:
        """Tell the server the task of `msg` is still being worked on (restarts its ack wait)."""
        self.transport.call(msg.in_progress(), "report progress")

    def nak(self, msg: Msg, delay: float | None = None) -> None:
        """Hand `msg` back for delivery (to any worker) now or after `delay` seconds."""
        self.transport.call(msg.nak(delay=delay), "hand a task back")

    def term(self, msg: Msg) -> None:
        """Drop `msg` for good (it can never be run)."""
        self.transport.call(msg.term(), "drop a task")


class TaskQueue:
    """The project's task stream and results bucket, through one transport."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.project = transport.project
        self.stream = stream_name(self.project)
        self._kv: KeyValue | None = None

    def ensure(self) -> None:
        """Create the task stream and the results bucket, or bring them to this config."""
        config = api.StreamConfig(
            name=self.stream,
            subjects=[f"{SUBJECT_ROOT}.{self.project}.task.>"],
            retention=api.RetentionPolicy.WORK_QUEUE,
            storage=api.StorageType.FILE,
            duplicate_window=DUPLICATE_WINDOW,
            max_consumers=MAX_CONSUMERS,
        )
        js = self.transport.js

        async def ensure() -> KeyValue:
            try:
                await js.stream_info(self.stream)
                await js.update_stream(config)
            except NotFoundError:
                await js.add_stream(config)
            try:
                return await js.key_value(bucket_name(self.project))
            except BucketNotFoundError:
                return await js.create_key_value(
                    bucket=bucket_name(self.project),
                    history=1,
                    storage=api.StorageType.FILE,
                    max_value_size=4 * TAIL,  # two tails in base64 and the rest
                )

        self._kv = self.transport.call(ensure(), f"create the task stream {self.stream}")

    @property
    def kv(self) -> KeyValue:
        """The results bucket (after `ensure`)."""
        assert self._kv is not None, "TaskQueue.ensure() first"
        return self._kv

    def ensure_consumer(self, labels: list[str], ack_wait: float = ACK_WAIT) -> None:
        """Make the consumer of `labels`' tasks (or set its ack wait)."""
        config = api.ConsumerConfig(
            durable_name=f"tasks-{labels_token(labels)}",
            ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=ack_wait,
            deliver_policy=api.DeliverPolicy.ALL,
            filter_subject=f"{_task_prefix(self.project, labels)}.>",
            max_deliver=-1,
        )
        self.transport.call(
            self.transport.js.add_consumer(self.stream, config), "create a task consumer"
        )

    def publish(self, task: TaskMessage) -> None:
        """Queue `task` for a worker; returns once the server has it on disk."""
        subject = task_subject(self.project, task.labels, task.runId, task.taskId)
        headers = {MSG_ID_HEADER: message_id(task.runId, task.taskId, task.attempt)}
        coro = self.transport.js.publish(
            subject,
            task.model_dump_json().encode(),
            timeout=REQUEST_TIMEOUT,
            stream=self.stream,
            headers=headers,
        )
        self.transport.call(coro, f"publish task {task.taskId}", REQUEST_TIMEOUT + 1)

    def waiting(self, task: TaskMessage) -> bool:
        """True while a message of `task` is in the stream (queued, or being worked on)."""
        subject = task_subject(self.project, task.labels, task.runId, task.taskId)

        async def look() -> bool:
            try:
                await self.transport.js.get_last_msg(self.stream, subject)
            except NotFoundError:
                return False
            return True

        return self.transport.call(look(), f"look for task {task.taskId}")

    def result(self, run_id: str, task_id: str, attempt: int) -> TaskResult | None:
        """The result of an attempt, or None while it has none."""

        async def get() -> bytes | None:
            try:
                entry = await self.kv.get(result_key(run_id, task_id, attempt))
            except KeyNotFoundError:
                return None
            return entry.value

        found = self.transport.call(get(), f"look up the result of {task_id}")
        return None if found is None else TaskResult.model_validate_json(found)

    def put_result(self, result: TaskResult) -> bool:
        """Write `result` unless its attempt has one; True if this one is the first."""
        key = result_key(result.runId, result.taskId, result.attempt)

        async def create() -> bool:
            try:
                await self.kv.create(key, result.model_dump_json().encode())
            except KeyWrongLastSequenceError:
                return False
            return True

        return self.transport.call(create(), f"report the result of {result.taskId}")

    def offers(self) -> list[Offer]:
        """Every label set's consumer of the task stream."""

        async def listing() -> list[api.ConsumerInfo]:
            found: list[api.ConsumerInfo] = []
            while True:
                page = await self.transport.js.consumers_info(self.stream, offset=len(found))
                found += page
                if not page:
                    return found

        offers = []
        for info in self.transport.call(listing(), "list the task consumers"):
            name, config = info.name, info.config
            prefix = f"{SUBJECT_ROOT}.{self.project}.task."
            subject = config.filter_subject or ""
            if not name.startswith("tasks-") or not subject.startswith(prefix):
                continue
            labels = labels_of(subject.removeprefix(prefix).removesuffix(".>"))
            offers.append(Offer(name, labels, config.ack_wait or ACK_WAIT))
        return offers

    def pull(self, name: str) -> Puller:
        """A subscription to the label set's consumer `name`."""
        coro = self.transport.js.pull_subscribe_bind(name, self.stream)
        return Puller(self.transport, name, self.transport.call(coro, f"bind to {name}"))

    def results(self, run_id: str) -> Puller:
        """The durable consumer of the results of run `run_id` (made if missing)."""
        name = f"results-{run_id}"
        stream = f"KV_{bucket_name(self.project)}"
        config = api.ConsumerConfig(
            durable_name=name,
            ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=RESULTS_ACK_WAIT,
            # A run looks up the results of the attempts it rejoins; the consumer only
            # needs what comes from now on.
            deliver_policy=api.DeliverPolicy.NEW,
            filter_subject=f"$KV.{bucket_name(self.project)}.{run_id}.>",
            inactive_threshold=RESULTS_IDLE,
        )

        async def bind() -> JetStreamContext.PullSubscription:
            try:
                await self.transport.js.consumer_info(stream, name)
            except NotFoundError:
                await self.transport.js.add_consumer(stream, config)
            return await self.transport.js.pull_subscribe_bind(name, stream)

        return Puller(self.transport, name, self.transport.call(bind(), "read the results"))

    def drop_results(self, run_id: str) -> None:
        """Remove the run's results consumer (the results stay in the bucket)."""

        async def drop() -> None:
            with contextlib.suppress(NotFoundError):
                await self.transport.js.delete_consumer(
                    f"KV_{bucket_name(self.project)}", f"results-{run_id}"
                )

        self.transport.call(drop(), "remove the results consumer")
