"""The delivery daemon's link to the other hosts of a swarm: mail out, mail in, heartbeats.

The daemon stays one plain loop of file operations. What crosses hosts is here:

- `send` (delivery.Remote): an outbox item for roles another host runs is published
  through outgoing.send, after its commit went to the hub; the daemon archives the
  original only once this returned.
- Mail in: one pull loop per role this host runs, on the transport's event loop
  thread (mailin.py), puts each message it fetches on a queue and wakes the daemon; `take`, on
  the daemon's thread, writes each as the role's copy (incoming.store) and acknowledges
  it only then. All file work stays on the daemon's thread, beside local delivery.
- `beat`: this host's heartbeat in the key-value store (presence.py), every few seconds.

A server that cannot be reached never stops local delivery: items for other hosts stay
in their outboxes (held) and the connection is tried again every few seconds; once
made, nats-py reconnects by itself.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future

from swarmforge.config.transportsettings import TransportSettings
from swarmforge.daemon import heartbeat
from swarmforge.daemon.mailin import pull, take
from swarmforge.handoff import message
from swarmforge.net import incoming, outgoing, presence
from swarmforge.net.consumer import Message
from swarmforge.net.failure import TransportError
from swarmforge.net.transport import Transport
from swarmforge.roletable import RoleEntry
from swarmforge.waiting import wait_until

RETRY_CONNECT = 2.0  # seconds between attempts to reach a server that did not answer
BEAT_EVERY = 5.0  # seconds between heartbeats


class Crossing:
    """Mail to and from the roles of other hosts, for the daemon of the project at `root`."""

    def __init__(
        self,
        root: str,
        settings: TransportSettings,
        remote: Mapping[str, str],
        log: logging.Logger,
        wake: Callable[[], None],
    ) -> None:
        self.root = root
        self.hub = settings.hub
        self.log = log
        self.wake = wake
        self._remote = dict(remote)
        self.transport = Transport.from_settings(settings, root)
        self.connected = False
        self._said = ""  # the last connection failure logged, logged once
        self._mail: queue.SimpleQueue[tuple[str, Message]] = queue.SimpleQueue()
        self._local: dict[str, RoleEntry] = {}
        self._pulls: dict[str, Future[None]] = {}
        self._beaten = 0.0
        self._lock = threading.Lock()
        self._closing = threading.Event()

    # -- the connection -----------------------------------------------------------------

    def start(self, wait: float = 0.0) -> None:
        """Connect in the background: the daemon's loop never waits on the network
        (`wait`: seconds to wait for the first connection, for a single pass)."""
        threading.Thread(target=self._connect, name="swarmforge-connect", daemon=True).start()
        wait_until(lambda: self.connected, wait)

    def _connect(self) -> None:
        """Try to connect until it works (or the daemon stops), then start taking mail."""
        while not self._closing.is_set():
            try:
                self.transport.connect()
                self.transport.ensure_stream()
            except TransportError as exc:
                if exc.message != self._said:
                    self.log.error("mail cannot cross hosts yet: %s", exc.message)
                    self._said = exc.message
                self._closing.wait(RETRY_CONNECT)
                continue
            except Exception:
                if self._closing.is_set():
                    return  # the daemon closed the transport under this attempt
                raise
            self.log.info(
                "connected to %s (project %s on the server)", self.transport.address, self.project
            )
            with self._lock:
                if self._closing.is_set():
                    return
                self.connected = True
                self._serve()
            self.wake()
            return

    def ready(self) -> bool:
        """True while connected, with the project's stream (nats-py reconnects by itself)."""
        return self.connected and self.transport.connected

    @property
    def project(self) -> str:
        return self.transport.project

    def close(self) -> None:
        """Stop the pull loops and close the connection (unacknowledged mail comes again)."""
        self._closing.set()
        with self._lock:
            for pull in self._pulls.values():
                pull.cancel()
            self._pulls.clear()
            self.connected = False
        self.transport.close()

    # -- mail out (delivery.Remote) -----------------------------------------------------

    @property
    def roles(self) -> Mapping[str, str]:
        """Each role another host runs, with that host's name."""
        return self._remote

    def set_remote(self, remote: Mapping[str, str]) -> None:
        """The roles other hosts run, as the role table now says."""
        self._remote = dict(remote)

    def send(self, path: str, handoff: message.Handoff, recipients: list[str]) -> None:
        """Publish the item at `path` to `recipients` on their hosts; TransportError or
        HubError while it cannot be (the original then stays in the outbox)."""
        if not self.ready():
            why = "reconnecting" if self.connected else self._said or "not connected yet"
            raise TransportError(f"mail cannot cross hosts now: {why} ({self.transport.address})")
        outgoing.send(self.transport, path, recipients, hub=self.hub, handoff=handoff)

    # -- mail in ------------------------------------------------------------------------

    def serve(self, local: Mapping[str, RoleEntry]) -> None:
        """Take mail for exactly the roles in `local` (the roles this host runs)."""
        with self._lock:
            self._local = dict(local)
            if self.connected:
                self._serve()

    def _serve(self) -> None:
        for role in set(self._pulls) - set(self._local):
            self._pulls.pop(role).cancel()
        for role in set(self._local) - set(self._pulls):
            coro = pull(self.transport, role, self._mail, self.wake, self.log)
            self._pulls[role] = asyncio.run_coroutine_threadsafe(coro, self.transport.loop)

    def take(self) -> list[tuple[str, incoming.Received]]:
        """Write every message fetched so far into its role's inbox (mailin.take)."""
        return take(self._mail, self._local, self.hub, self.log)

    # -- heartbeats ---------------------------------------------------------------------

    def beat(self) -> None:
        """Say that this host is alive, with its roles and ports, if a beat is due."""
        now = time.monotonic()
        if now - self._beaten < BEAT_EVERY or not self.ready():
            return
        self._beaten = now
        try:
            beat = heartbeat.local_beat(self.root, os.getpid())
            if beat is not None:
                presence.beat(self.transport, beat)
        except TransportError as exc:
            self.log.warning("heartbeat not sent: %s", exc.message)
