"""What a view shows, aged between two reads: every age counts on without reading again."""

from __future__ import annotations

from dataclasses import replace

from swarmforge.swarm.status.crosshost import CrossHost
from swarmforge.views.snapshot import Snapshot


def aged(cross: CrossHost, seconds: int) -> CrossHost:
    """`cross` as it stands `seconds` after it was asked: every beat that much older."""
    if seconds <= 0:
        return cross
    roles = [
        r
        if r.beat_age_seconds is None
        else replace(r, beat_age_seconds=r.beat_age_seconds + seconds)
        for r in cross.roles
    ]
    hosts = [
        h if h.age_seconds is None else replace(h, age_seconds=h.age_seconds + seconds)
        for h in cross.hosts
    ]
    return replace(cross, roles=roles, hosts=hosts)


def _older(age: int | None, seconds: int) -> int | None:
    return None if age is None else age + seconds


def aged_snapshot(snap: Snapshot, seconds: int) -> Snapshot:
    """`snap` as it stands `seconds` after it was read: every age that much older."""
    if seconds <= 0:
        return snap
    rows = [
        replace(r, state_age=_older(r.state_age, seconds), oldest_age=_older(r.oldest_age, seconds))
        for r in snap.rows
    ]
    cross = aged(snap.cross, seconds) if snap.cross is not None else None
    return replace(snap, rows=rows, cross=cross)
