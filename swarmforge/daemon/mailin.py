"""Mail in from other hosts: each role's pull loop, and its messages written into the inboxes.

A pull loop runs on the transport's event loop thread and only queues what it
fetches; `take` runs on the daemon's thread, beside local delivery (crossing.py).
"""

from __future__ import annotations

import asyncio
import logging
import queue
from collections.abc import Callable, Mapping

from nats.errors import TimeoutError as NatsTimeout

from swarmforge.net import incoming
from swarmforge.net.consumer import Message
from swarmforge.net.failure import TransportError
from swarmforge.net.transport import Transport
from swarmforge.roletable import RoleEntry

PULL_BATCH = 32
PULL_WAIT = 5.0  # seconds one pull request waits on the server for mail
HELD_DELAY = 5.0  # seconds before a message that could not be kept comes again


async def pull(
    transport: Transport,
    role: str,
    mail: queue.SimpleQueue[tuple[str, Message]],
    wake: Callable[[], None],
    log: logging.Logger,
) -> None:
    """Fetch `role`'s mail for ever, handing each message to the daemon's thread."""
    said = ""
    while True:
        try:
            sub = await transport.bind(role)
            while True:
                try:
                    msgs = await sub.fetch(PULL_BATCH, timeout=PULL_WAIT)
                except NatsTimeout:
                    continue
                for msg in msgs:
                    mail.put((role, Message(transport, msg)))
                wake()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any failure: wait, then pull again
            text = f"taking the mail of {role} failed, retrying: {exc or type(exc).__name__}"
            if text != said:
                log.warning("%s", text)
                said = text
            await asyncio.sleep(1.0)


def take(
    mail: queue.SimpleQueue[tuple[str, Message]],
    local: Mapping[str, RoleEntry],
    hub: str | None,
    log: logging.Logger,
) -> list[tuple[str, incoming.Received]]:
    """Write every message fetched so far into its role's inbox; (role, what became of it).

    A message is acknowledged once its copy is durable; one that could not be kept
    (an unsafe mailbox, a hub that did not answer) comes again a little later. A
    lost acknowledgement only means the message comes again, and finds its copy.
    """
    done: list[tuple[str, incoming.Received]] = []
    while True:
        try:
            role, msg = mail.get_nowait()
        except queue.Empty:
            return done
        entry = local.get(role)
        if entry is None:
            continue  # the role left this host: its mail comes again to whoever runs it
        result = incoming.store(role, entry.path, msg, hub)
        try:
            if result.status == incoming.HELD:
                msg.nak(HELD_DELAY)
            else:
                msg.ack()
        except TransportError as exc:
            log.warning("acknowledging %s failed (it comes again): %s", result.name, exc)
        done.append((role, result))
