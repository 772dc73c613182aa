"""A role's durable pull consumer of its mail, and the messages taken from it.

A message is deleted from the stream once acknowledged, which the receiver does only
after the file is durable in the recipient's inbox.
"""

from __future__ import annotations

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from swarmforge.net.connection import REQUEST_TIMEOUT, Connection
from swarmforge.net.mailstream import MSG_ID_HEADER

ACK_WAIT = 30.0  # seconds an unacknowledged message waits before it is delivered again


class Message:
    """One message taken from a role's consumer; `ack()` deletes it from the stream."""

    __slots__ = ("_msg", "_transport", "data", "headers", "msg_id")

    def __init__(self, transport: Connection, msg: Msg) -> None:
        self._transport = transport
        self._msg = msg
        self.data: bytes = msg.data
        self.headers: dict[str, str] = dict(msg.headers or {})
        self.msg_id = self.headers.get(MSG_ID_HEADER, "")

    def ack(self) -> None:
        """Acknowledge the message, waiting until the server confirms it.

        A lost acknowledgement only means the message comes again after the ack wait,
        which the receiver recognises.
        """
        self._transport.call(self._msg.ack_sync(timeout=REQUEST_TIMEOUT), "acknowledge")

    def nak(self, delay: float) -> None:
        """Have the message delivered again in `delay` seconds: it could not be kept yet."""
        self._transport.call(self._msg.nak(delay=delay), "return a message")


class Consumer:
    """The durable pull consumer of one role: explicit acknowledgement, one ack wait."""

    def __init__(self, transport: Connection, role: str, sub: JetStreamContext.PullSubscription):
        self.transport = transport
        self.role = role
        self._sub = sub

    def fetch(self, batch: int = 10, timeout: float = 1.0) -> list[Message]:
        """Up to `batch` messages, waiting at most `timeout` seconds; [] when none came."""

        async def take() -> list[Msg]:
            try:
                return await self._sub.fetch(batch, timeout=timeout)
            except TimeoutError:
                # nats-py's own TimeoutError, or asyncio's, which its fetch raises when the
                # server's end-of-request status comes just as the time runs out: no mail.
                return []

        msgs = self.transport.call(take(), f"fetch mail of {self.role}", timeout + REQUEST_TIMEOUT)
        return [Message(self.transport, msg) for msg in msgs]
