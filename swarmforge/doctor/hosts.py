"""The hosts of a swarm on several hosts: each one the swarm names beats, or says since when
it has not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.doctor.check import Check

if TYPE_CHECKING:
    from swarmforge.net.presence import HostSeen


def check_hosts(
    seen: list[HostSeen], expected: dict[str, str], mine: str, record: SessionRecord | None
) -> list[Check]:
    """Each known host beats (warn for one that stopped, or never started)."""
    from swarmforge.net.beats import wire_name
    from swarmforge.times import duration, stamp

    checks = []
    for host in seen:
        name = f"host {host.beat.host}"
        ago = duration(int(host.age))
        if host.reachable:
            daemon = f"daemon pid {host.beat.pid} on {host.beat.machine}"
            detail = f"reachable: last beat {ago} ago ({daemon})"
            checks.append(Check(name, "ok", detail))
            continue
        fix = _start_fix(host.beat.host, host.beat.primary)
        if host.beat.key == mine:
            fix = "this host's delivery daemon sends the beats: `swarmforge up` starts it"
        since = stamp(host.received_at)
        detail = f"unreachable since its last beat at {since}, {ago} ago (from {host.beat.machine})"
        checks.append(Check(name, "warn", detail, fix))
    beating = {host.beat.key for host in seen}
    for key, host_name in expected.items():
        if key in beating or (key == mine and (record is None or record.state != "running")):
            continue
        shown = host_name or "(the host without --host)"
        detail, fix = "never seen: no beat from it yet", _start_fix(host_name, not host_name)
        if key == mine:
            shown = wire_name(record.host if record else None)
            detail = "this host's run is running, but it sent no beat"
            fix = "its delivery daemon sends them: `swarmforge up` starts it"
        checks.append(Check(f"host {shown}", "warn", detail, fix))
    return checks


def _start_fix(host: str, primary: bool) -> str:
    command = "swarmforge up" if primary else f"swarmforge up --host {host}"
    return f"run `{command}` on that machine, or check its network to the NATS server"
