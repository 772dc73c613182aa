"""Time as swarmforge writes and reads it: UTC stamps, their one parser, and ages (45s, 12m).

Every instant swarmforge writes is UTC and says so with a `Z`: `stamp` in headers and
records (2026-06-15T14:05:31Z), `compact` in names and ids (20260615T140531Z),
`precise` in the event log (2026-06-15T14:05:31.123456Z); `parse` reads each of them
back. The helpers' start-up path imports this module, so it imports only `time` at
its top: `parse` alone needs datetime, and the helpers never parse.
"""

from __future__ import annotations

import time


def stamp(seconds: float | None = None) -> str:
    """An ISO-8601 UTC instant to the second (2026-06-15T14:05:31Z); now when not given."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def compact(seconds: float | None = None, *, micro: bool = False) -> str:
    """The UTC instant used in file names and ids (20260615T140531Z); with `micro`, its
    microseconds too (20260615T140531123456Z)."""
    now = time.time() if seconds is None else seconds
    whole = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    return f"{whole}{int(now % 1 * 1_000_000):06d}Z" if micro else f"{whole}Z"


def precise(ns: int | None = None) -> str:
    """A UTC instant with microseconds (2026-06-15T14:05:31.123456Z), from nanoseconds
    since the epoch; now when not given."""
    seconds, rest = divmod(time.time_ns() if ns is None else ns, 1_000_000_000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{rest // 1000:06d}Z"


def parse(text: str) -> float:
    """Seconds since the epoch of an ISO-8601 instant: any form above, a run's milliseconds,
    or one a person types (2026-06-15, an offset); UTC unless it says otherwise.

    Raises ValueError for anything else.
    """
    from datetime import UTC, datetime  # here, not at the top: see the module docstring

    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def duration(seconds: int | None) -> str:
    """`seconds` as a short age: 45s, 12m, 3h, 2d; `-` when unknown."""
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"
