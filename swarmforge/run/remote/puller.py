"""A pull subscription on a durable JetStream consumer, through the synchronous transport."""

from __future__ import annotations

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from swarmforge.net.connection import REQUEST_TIMEOUT
from swarmforge.net.transport import Transport


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
