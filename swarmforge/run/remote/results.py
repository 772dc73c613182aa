"""The project's results bucket: the result of each attempt of a task, written once.

The results bucket `swarmforge-<project>-results` is a key-value bucket, which is a
stream with limits retention, keyed `<runId>.<taskId>.<attempt>`. A worker writes a
result with `create`, so the first result of an attempt wins, and before running a
message it asks whether its attempt has a result already: a worker killed after its
result but before its acknowledgement never makes the task run again. The
orchestrator reads a run's results through a durable consumer of the bucket's stream
(`results-<runId>`), and a resumed one also looks up the attempts it waits for.
"""

from __future__ import annotations

import contextlib

from nats.js import JetStreamContext, api
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue

from swarmforge.net.transport import Transport
from swarmforge.run.remote.messages import TaskResult
from swarmforge.run.remote.puller import Puller
from swarmforge.run.remote.subjects import bucket_name, result_key

RESULTS_ACK_WAIT = 30.0
RESULTS_IDLE = 86400.0  # a run's results consumer unused this long is removed by the server


class ResultsBucket:
    """The project's results bucket, through one transport (opened by `TaskQueue.ensure`)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.project = transport.project
        self._kv: KeyValue | None = None

    @property
    def kv(self) -> KeyValue:
        """The results bucket (after `ensure`)."""
        assert self._kv is not None, "TaskQueue.ensure() first"
        return self._kv

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
