"""The copy a repair queues: the headers it adds, and telling a copy from another of its name."""

from __future__ import annotations

from typing import Literal

from swarmforge import times
from swarmforge.errors import CorruptFile
from swarmforge.handoff import message
from swarmforge.handoff.message import Handoff

REQUEUED_AT = "requeued_at"


REQUEUE_COUNT = "requeue_count"


def stamped(handoff: Handoff, now: float | None = None) -> Handoff:
    """`handoff` with `requeued_at` set and `requeue_count` one more than it was."""
    count = handoff.get(REQUEUE_COUNT) or "0"
    previous = int(count) if count.isascii() and count.isdigit() else 0
    return handoff.with_header(REQUEUED_AT, times.stamp(now)).with_header(
        REQUEUE_COUNT, str(previous + 1)
    )


def unstamped(handoff: Handoff) -> Handoff:
    """`handoff` without the headers a repair adds: what a copy and its original share."""
    kept = [(n, v) for n, v in handoff.headers if n not in (REQUEUED_AT, REQUEUE_COUNT)]
    return Handoff(kept, handoff.body)


def requeue_count(handoff: Handoff) -> int | None:
    value = handoff.get(REQUEUE_COUNT) or ""
    return int(value) if value.isascii() and value.isdigit() else None


def queued_twin(target: str, original: Handoff) -> Handoff | Literal[False] | None:
    """The copy of `original` already at `target` (a repair was killed after making it), None
    if there is none, False if another handoff holds that name."""
    try:
        there = message.read(target)
    except FileNotFoundError:
        return None
    except (OSError, CorruptFile):
        return False
    return there if unstamped(there) == unstamped(original) else False
