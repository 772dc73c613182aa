"""A small synchronous face of nats-py for the (synchronous) delivery daemon.

nats-py is asyncio only; the daemon is a plain loop of file operations. One
background thread runs an event loop that owns the connection, and every call here
hands it a coroutine and waits for the answer with a time limit.

One JetStream stream per project holds the mail of every role, on subjects
`swarmforge.<project>.role.<role>`:

- file storage, so mail survives a restart of the server;
- work-queue retention: each role has exactly one consumer on its own subject, and a
  message is deleted once that consumer acknowledged it, which the receiver does only
  after the file is durable in the recipient's inbox. Nothing else reads the mail
  again, so keeping it (limits retention) would only let the stream grow;
- a duplicate window of two minutes: a sender killed after its publish but before it
  moved the original to sent/ publishes again on restart with the same message id,
  and the server drops the second copy.

The project's name on the server must be the same on every host, whose paths differ:
it is `[transport] project` when given, otherwise a hash of the hub's URL, which every
host already shares (they all push to and fetch from it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import Error as NatsError
from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from swarmforge.config.transportsettings import TransportSettings
from swarmforge.errors import SwarmforgeError

T = TypeVar("T")

SUBJECT_ROOT = "swarmforge"
DUPLICATE_WINDOW = 120.0  # seconds: a publish repeated within it is dropped
ACK_WAIT = 30.0  # seconds an unacknowledged message waits before it is delivered again
CONNECT_TIMEOUT = 3.0
REQUEST_TIMEOUT = 5.0
MSG_ID_HEADER = "Nats-Msg-Id"
# One durable consumer per role: set explicitly, since a stream that sets none (or -1)
# gets the server's default of 1,000 (see docs/scale.md).
MAX_CONSUMERS = 10_000
PLAIN_TOKEN = re.compile(r"[A-Za-z0-9-]+")


class TransportError(SwarmforgeError):
    """The NATS server could not be reached or did not do what was asked; the message
    says which in one line."""


def project_id(settings: TransportSettings) -> str:
    """The project's name on the server: `project`, or a short hash of the hub's URL."""
    if settings.project is not None:
        return settings.project
    hub = (settings.hub or "").rstrip("/")
    return hashlib.sha256(hub.encode("utf-8")).hexdigest()[:16]


def token(name: str) -> str:
    """`name` as one token of a subject or a consumer name.

    A role name may hold `*` or `>`, wildcards in a subject: any name with more than
    letters, digits and `-` is written as `=` and its UTF-8 in hex, which no plain
    name can be, so two roles never share a token.
    """
    if PLAIN_TOKEN.fullmatch(name):
        return name
    return "=" + name.encode("utf-8").hex()


def stream_name(project: str) -> str:
    """The project's stream."""
    return f"SWARMFORGE-{project}"


def subject(project: str, role: str) -> str:
    """The subject of `role`'s mail."""
    return f"{SUBJECT_ROOT}.{project}.role.{token(role)}"


def consumer_name(project: str, role: str) -> str:
    """The durable consumer through which `role` takes its mail."""
    return f"{project}-{token(role)}"


def stream_config(project: str) -> api.StreamConfig:
    """The configuration every host expects of the project's stream."""
    return api.StreamConfig(
        name=stream_name(project),
        subjects=[f"{SUBJECT_ROOT}.{project}.role.*"],
        retention=api.RetentionPolicy.WORK_QUEUE,
        storage=api.StorageType.FILE,
        duplicate_window=DUPLICATE_WINDOW,
        max_consumers=MAX_CONSUMERS,
    )


def config_problems(found: api.StreamConfig, project: str) -> list[str]:
    """How the stream's configuration differs from the one expected (empty if it does not)."""
    want = stream_config(project)
    problems = []
    for field in ("subjects", "retention", "storage", "duplicate_window", "max_consumers"):
        have, expected = getattr(found, field), getattr(want, field)
        if have != expected:
            problems.append(f"{field} is {have}, expected {expected}")
    return problems


class Message:
    """One message taken from a role's consumer; `ack()` deletes it from the stream."""

    __slots__ = ("_msg", "_transport", "data", "headers", "msg_id")

    def __init__(self, transport: Transport, msg: Msg) -> None:
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

    def __init__(self, transport: Transport, role: str, sub: JetStreamContext.PullSubscription):
        self.transport = transport
        self.role = role
        self._sub = sub

    def fetch(self, batch: int = 10, timeout: float = 1.0) -> list[Message]:
        """Up to `batch` messages, waiting at most `timeout` seconds; [] when none came."""

        async def take() -> list[Msg]:
            try:
                return await self._sub.fetch(batch, timeout=timeout)
            except NatsTimeout:
                return []

        msgs = self.transport.call(take(), f"fetch mail of {self.role}", timeout + REQUEST_TIMEOUT)
        return [Message(self.transport, msg) for msg in msgs]


class Transport:
    """A connection to the NATS server with the project's stream, usable from any thread.

    It reconnects by itself once connected; a publish or fetch while the server is away
    fails with TransportError, and the caller tries again on its next pass.
    """

    def __init__(
        self,
        url: str,
        project: str,
        *,
        user: str | None = None,
        password: str | None = None,
        credentials: str | None = None,
    ) -> None:
        self.url = url
        self.project = project
        self._auth: dict[str, Any] = {}
        if credentials is not None:
            self._auth["user_credentials"] = credentials
        elif user is not None:
            self._auth.update(user=user, password=password or "")
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._nc: Client | None = None
        self._js: JetStreamContext | None = None

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

    # -- the loop thread ----------------------------------------------------------------

    def call(self, coro: Coroutine[Any, Any, T], what: str, timeout: float = REQUEST_TIMEOUT) -> T:
        """Run `coro` on the loop thread and return its result; TransportError on failure."""
        if self._thread is None:
            coro.close()
            raise TransportError(f"cannot {what}: not connected to {self.url}")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise TransportError(f"cannot {what}: {self.url} did not answer in time") from None
        except (NatsError, OSError) as exc:
            raise TransportError(f"cannot {what}: {describe(exc)}") from exc

    def connect(self, timeout: float = CONNECT_TIMEOUT) -> None:
        """Connect, or raise TransportError saying why not (unreachable, refused login)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="swarmforge-nats", daemon=True
            )
            self._thread.start()
        self._nc = self.call(self._connect(timeout), f"connect to {self.url}", timeout + 1)
        self._js = self._nc.jetstream(timeout=REQUEST_TIMEOUT)

    async def _connect(self, timeout: float) -> Client:
        """The first connection fails at the first error; later ones are retried forever."""
        first_error: asyncio.Future[BaseException] = self._loop.create_future()

        async def on_error(exc: Exception) -> None:
            if not first_error.done():
                first_error.set_result(exc)

        attempt = asyncio.ensure_future(
            nats.connect(
                self.url,
                error_cb=on_error,
                connect_timeout=timeout,
                max_reconnect_attempts=-1,
                reconnect_time_wait=0.5,
                name="swarmforge",
                **self._auth,
            )
        )
        racing: set[asyncio.Future[Any]] = {attempt, first_error}
        done, _ = await asyncio.wait(racing, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if attempt in done:
            return attempt.result()
        attempt.cancel()
        if first_error in done:
            raise TransportError(f"cannot connect to {self.url}: {describe(first_error.result())}")
        raise TransportError(f"cannot connect to {self.url}: no answer in {timeout:g} s")

    def close(self) -> None:
        """Close the connection and stop the loop thread."""
        if self._thread is None:
            return
        if self._nc is not None:
            with contextlib.suppress(TransportError):
                self.call(self._nc.close(), "close the connection")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._thread = None
        self._nc = self._js = None
        self._loop.close()

    def __enter__(self) -> Transport:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        """True while the connection is up (not while nats-py is reconnecting)."""
        return self._nc is not None and self._nc.is_connected

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop, run by this transport's own thread, that owns the connection."""
        return self._loop

    @property
    def js(self) -> JetStreamContext:
        """The JetStream context; TransportError before `connect`."""
        if self._js is None:
            raise TransportError(f"not connected to {self.url}")
        return self._js

    # -- JetStream ----------------------------------------------------------------------

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


def describe(exc: BaseException) -> str:
    """One plain line for what nats-py or the network raised."""
    text = str(exc)
    if "Authorization Violation" in text or "Authentication" in text:
        return "the server refused the login (wrong user, password or credentials)"
    if isinstance(exc, ConnectionRefusedError):
        return "nothing listens there (connection refused)"
    if isinstance(exc, OSError):
        return exc.strerror or text
    return text.removeprefix("nats: ") or type(exc).__name__
