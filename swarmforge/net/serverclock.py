"""The server's clock against ours, so that hosts whose clocks disagree still see each
other's ages right.

The reader learns the server's clock by storing a probe in the project's bucket and
reading back the time the server gave it.
"""

from __future__ import annotations

import datetime
import socket
import time
from dataclasses import dataclass

from swarmforge.net.bucket import bucket_name, open_bucket
from swarmforge.net.failure import TransportError
from swarmforge.net.subjects import token
from swarmforge.net.transport import Transport

PROBE_PREFIX = "probe."


@dataclass(frozen=True)
class ServerClock:
    """The server's clock against ours: server time = local time + `offset`."""

    offset: float
    uncertainty: float  # half the round trip of the probe

    def now(self, local: float | None = None) -> float:
        """The server's time now (or at local time `local`)."""
        return (time.time() if local is None else local) + self.offset


def server_clock(transport: Transport) -> ServerClock:
    """Measure the server's clock: store a probe, read back when the server stored it."""
    # One key per machine, overwritten (history 1): probes never make the bucket grow.
    key = PROBE_PREFIX + token(socket.gethostname())

    async def probe() -> tuple[float, float, datetime.datetime | None]:
        kv = await open_bucket(transport)
        before = time.time()
        seq = await kv.put(key, b"")
        after = time.time()
        stored = await transport.js.get_msg(f"KV_{bucket_name(transport.project)}", seq=seq)
        return before, after, stored.time

    before, after, stamp = transport.call(probe(), "read the server's clock")
    if stamp is None:
        raise TransportError("cannot read the server's clock: it gave no time for the probe")
    middle = (before + after) / 2
    return ServerClock(stamp.timestamp() - middle, (after - before) / 2)
