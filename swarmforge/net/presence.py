"""Which hosts of a swarm are alive, and which ports they hold: heartbeats in a JetStream
key-value bucket.

Each host's delivery daemon puts a `HostBeat` every BEAT_EVERY seconds under the host's
key in the project's bucket (history 1: only the last beat of each host is kept). A
reader judges a host by the time the server stored its last beat, compared with the
server's clock, never with the sender's: hosts whose clocks disagree still see each
other's ages right (serverclock.py).

A host that stopped beating keeps its last beat in the bucket and is shown as
unreachable, with the time of that beat, for as long as the bucket lives: a host that
went away is something to see, not to hide.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from nats.js.errors import NotFoundError
from pydantic import ValidationError

from swarmforge.net.beats import HostBeat, host_key
from swarmforge.net.bucket import bucket_name, open_bucket
from swarmforge.net.serverclock import PROBE_PREFIX, ServerClock, server_clock
from swarmforge.net.transport import Transport

BEAT_EVERY = 5.0  # seconds between two beats of a host's daemon
REACHABLE_WITHIN = 15.0  # a host whose last beat is older than this is unreachable


@dataclass(frozen=True)
class HostSeen:
    """A host's last beat, as the server received it."""

    beat: HostBeat
    received_at: float  # the server's clock when it stored the beat (epoch seconds)
    age: float  # seconds from then to now, by the server's clock
    reachable: bool

    @property
    def skew(self) -> float:
        """How far the sender's clock was behind the server's (plus the beat's travel time)."""
        return self.received_at - self.beat.sent_at


def beat(transport: Transport, sent: HostBeat) -> None:
    """Put `sent` as its host's last beat; TransportError if the server does not take it."""

    async def put() -> None:
        kv = await open_bucket(transport)
        await kv.put(sent.key, sent.model_dump_json().encode())

    transport.call(put(), f"send the heartbeat of {sent.host}")


def hosts(
    transport: Transport, within: float = REACHABLE_WITHIN, clock: ServerClock | None = None
) -> list[HostSeen]:
    """Every host that ever beat in this bucket, by name: reachable if its last beat is
    younger than `within` seconds by the server's clock (`clock`: measured when None)."""
    seen = clock or server_clock(transport)
    now = seen.now()
    found = []
    for beat_, stored in transport.call(_last_beats(transport), "read the heartbeats"):
        age = max(0.0, now - stored)
        found.append(HostSeen(beat_, stored, age, age < within))
    return sorted(found, key=lambda h: (not h.beat.primary, h.beat.host))


async def _last_beats(transport: Transport) -> list[tuple[HostBeat, float]]:
    """The last beat of each host and the server's time of it; unreadable ones skipped
    (every host runs the same format; a newer one only adds fields, which are ignored).

    The bucket's stream lists its keys' subjects, and each key's last message is read
    directly: no consumer to make, and nothing missed (a arrivals may say it is done
    before the entries it was sent have reached it).
    """
    await open_bucket(transport)
    stream = f"KV_{bucket_name(transport.project)}"
    prefix = f"$KV.{bucket_name(transport.project)}."
    info = await transport.js.stream_info(stream, subjects_filter=f"{prefix}>")
    found = []
    for subject in sorted(info.state.subjects or {}):
        if subject[len(prefix) :].startswith(PROBE_PREFIX):
            continue
        try:
            stored = await transport.js.get_last_msg(stream, subject)
        except NotFoundError:
            continue  # gone meanwhile
        if stored.headers and stored.headers.get("KV-Operation") in ("DEL", "PURGE"):
            continue
        try:
            parsed = HostBeat.model_validate_json(stored.data or b"")
        except ValidationError:
            continue
        when = _epoch(stored.time)
        if when is not None:
            found.append((parsed, when))
    return found


def _epoch(created: object) -> float | None:
    """The server's time of a stored message, as seconds since the epoch (None: not given)."""
    return created.timestamp() if isinstance(created, datetime.datetime) else None


def leased_ports(
    transport: Transport, except_host: str | None, within: float = REACHABLE_WITHIN
) -> set[int]:
    """The ports the roles of live hosts other than `except_host` hold (None: the host
    that runs `up` without --host): a host starting roles picks other ones."""
    mine = host_key(except_host)
    return {
        role.port
        for seen in hosts(transport, within)
        if seen.reachable and seen.beat.key != mine
        for role in seen.beat.roles
    }
