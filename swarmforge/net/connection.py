"""A connection to the NATS server, usable from the (synchronous) delivery daemon.

nats-py is asyncio only; the daemon is a plain loop of file operations. One
background thread runs an event loop that owns the connection, and every call here
hands it a coroutine and waits for the answer with a time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, Self, TypeVar

import nats
from nats.aio.client import Client
from nats.errors import Error as NatsError
from nats.js import JetStreamContext

from swarmforge.net.failure import TransportError, describe
from swarmforge.text import shown_url

T = TypeVar("T")

CONNECT_TIMEOUT = 3.0
REQUEST_TIMEOUT = 5.0


class Connection:
    """A connection to the NATS server for one project, usable from any thread.

    It reconnects by itself once connected; a call while the server is away fails
    with TransportError, and the caller tries again on its next pass.
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
        self.address = shown_url(url)  # what messages show: never the password
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

    def call(self, coro: Coroutine[Any, Any, T], what: str, timeout: float = REQUEST_TIMEOUT) -> T:
        """Run `coro` on the loop thread and return its result; TransportError on failure."""
        if self._thread is None:
            coro.close()
            raise TransportError(f"cannot {what}: not connected to {self.address}")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise TransportError(f"cannot {what}: {self.address} did not answer in time") from None
        except (NatsError, OSError) as exc:
            raise TransportError(f"cannot {what}: {describe(exc)}") from exc

    def connect(self, timeout: float = CONNECT_TIMEOUT) -> None:
        """Connect, or raise TransportError saying why not (unreachable, refused login)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="swarmforge-nats", daemon=True
            )
            self._thread.start()
        self._nc = self.call(self._connect(timeout), f"connect to {self.address}", timeout + 1)
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
            raise TransportError(
                f"cannot connect to {self.address}: {describe(first_error.result())}"
            )
        raise TransportError(f"cannot connect to {self.address}: no answer in {timeout:g} s")

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

    def __enter__(self) -> Self:
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
            raise TransportError(f"not connected to {self.address}")
        return self._js
