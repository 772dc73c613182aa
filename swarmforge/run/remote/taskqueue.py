"""The project's task stream: planned-run tasks queued for workers on other hosts.

The task stream `SWARMFORGE-<project>-TASKS`, next to the mail stream of
transport.py, has file storage and work-queue retention. Each label set has one
durable pull consumer, `tasks-<labels>`, shared by every worker that holds all of
those labels; a worker lists the consumers and pulls from those it satisfies. The
orchestrator makes the consumer before it publishes, with the ack wait after which
the task of a silent (dead) worker is delivered again. The message id
`<runId>:<taskId>:<attempt>` makes the server drop an attempt published twice (by a
resumed orchestrator) within the duplicate window.
"""

from __future__ import annotations

from dataclasses import dataclass

from nats.js import api
from nats.js.errors import BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from swarmforge.net.connection import REQUEST_TIMEOUT
from swarmforge.net.mailstream import DUPLICATE_WINDOW, MSG_ID_HEADER
from swarmforge.net.subjects import SUBJECT_ROOT
from swarmforge.net.transport import Transport
from swarmforge.run.remote.messages import TaskMessage
from swarmforge.run.remote.puller import Puller
from swarmforge.run.remote.results import ResultsBucket
from swarmforge.run.remote.subjects import (
    bucket_name,
    labels_of,
    labels_token,
    message_id,
    stream_name,
    task_prefix,
    task_subject,
)
from swarmforge.run.report.markdown import TAIL

ACK_WAIT = 30.0  # seconds a worker may stay silent before its task goes to another
MAX_CONSUMERS = 4096  # label sets (the server's default cap would be 1,000)


@dataclass(frozen=True)
class Offer:
    """A label set's consumer, as a worker finds it."""

    name: str
    labels: frozenset[str]
    ack_wait: float


class TaskQueue(ResultsBucket):
    """The project's task stream and results bucket, through one transport."""

    def __init__(self, transport: Transport) -> None:
        super().__init__(transport)
        self.stream = stream_name(self.project)

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

    def ensure_consumer(self, labels: list[str], ack_wait: float = ACK_WAIT) -> None:
        """Make the consumer of `labels`' tasks (or set its ack wait)."""
        config = api.ConsumerConfig(
            durable_name=f"tasks-{labels_token(labels)}",
            ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=ack_wait,
            deliver_policy=api.DeliverPolicy.ALL,
            filter_subject=f"{task_prefix(self.project, labels)}.>",
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
