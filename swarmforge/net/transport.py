"""The project's mail on the NATS server: its stream, and each role's publish and
durable consumer, over a connection the delivery daemon can use (connection.py).

The stream's configuration is in mailstream.py; the names of the project, its stream,
subjects and consumers on the server are in subjects.py.
"""

from __future__ import annotations

from collections.abc import Mapping

import nats
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from swarmforge.config.transportsettings import TransportSettings
from swarmforge.net.connection import REQUEST_TIMEOUT, Connection
from swarmforge.net.consumer import ACK_WAIT, Consumer
from swarmforge.net.failure import TransportError
from swarmforge.net.mailstream import MSG_ID_HEADER, stream_config
from swarmforge.net.subjects import consumer_name, project_id, stream_name, subject


class Transport(Connection):
    """The connection that carries the project's mail, usable from any thread.

    A publish or fetch while the server is away fails with TransportError, and the
    caller tries again on its next pass.
    """

    @classmethod
    def from_settings(
        cls, settings: TransportSettings, root: str, env: Mapping[str, str] | None = None
    ) -> Transport:
        """The transport that `[transport]` of the project at `root` describes."""
        login = settings.user_password(env)
        return cls(
            settings.url,
            project_id(settings),
            user=login[0] if login else None,
            password=login[1] if login else None,
            credentials=settings.credentials_path(root),
        )

    def jetstream_enabled(self) -> bool:
        """True if the server (for this account) has JetStream."""
        try:
            self.call(self.js.account_info(), "ask for JetStream")
        except TransportError as exc:
            if isinstance(exc.__cause__, (nats.errors.NoRespondersError, NotFoundError)):
                return False
            raise
        return True

    def stream_info(self) -> api.StreamInfo | None:
        """The project's stream, or None when it does not exist."""

        async def look() -> api.StreamInfo | None:
            try:
                return await self.js.stream_info(stream_name(self.project))
            except NotFoundError:
                return None

        return self.call(look(), "look up the stream")

    def ensure_stream(self) -> api.StreamInfo:
        """Create the project's stream, or bring an existing one to the expected config."""

        async def ensure() -> api.StreamInfo:
            config = stream_config(self.project)
            try:
                await self.js.stream_info(config.name or "")
            except NotFoundError:
                return await self.js.add_stream(config)
            return await self.js.update_stream(config)

        return self.call(ensure(), f"create the stream {stream_name(self.project)}")

    def publish(
        self, role: str, msg_id: str, data: bytes, headers: Mapping[str, str] | None = None
    ) -> None:
        """Put `data` in `role`'s mail; returns once JetStream has it on disk.

        A second publish with the same `msg_id` within the duplicate window is dropped by
        the server (and acknowledged as such), so repeating a publish is always safe.
        """
        sent = {**(headers or {}), MSG_ID_HEADER: msg_id}
        self.call(
            self.js.publish(
                subject(self.project, role),
                data,
                timeout=REQUEST_TIMEOUT,
                stream=stream_name(self.project),
                headers=sent,
            ),
            f"publish {msg_id}",
            REQUEST_TIMEOUT + 1,
        )

    def consumer(self, role: str, ack_wait: float = ACK_WAIT) -> Consumer:
        """`role`'s durable consumer, made if missing (explicit ack, `ack_wait` seconds)."""
        return Consumer(
            self, role, self.call(self.bind(role, ack_wait), f"open the mail of {role}")
        )

    async def bind(
        self, role: str, ack_wait: float = ACK_WAIT
    ) -> JetStreamContext.PullSubscription:
        """(On the loop thread) a pull subscription to `role`'s durable consumer, which is
        made if missing: explicit acknowledgement, `ack_wait` seconds to acknowledge."""
        durable = consumer_name(self.project, role)
        config = api.ConsumerConfig(
            durable_name=durable,
            ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=ack_wait,
            deliver_policy=api.DeliverPolicy.ALL,
            filter_subject=subject(self.project, role),
        )
        await self.js.add_consumer(stream_name(self.project), config)
        return await self.js.pull_subscribe_bind(durable, stream_name(self.project))
