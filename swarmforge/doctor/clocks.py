"""The clocks of a swarm on several hosts: this host's and every other host's against the
NATS server's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.doctor.check import Check, Status

if TYPE_CHECKING:
    from swarmforge.net.presence import HostSeen
    from swarmforge.net.serverclock import ServerClock

SKEW_WARN = 2.0  # seconds between two clocks that are worth a warning
SKEW_FAIL = 30.0
SKEW_WHY = (
    "times compared across hosts mislead: handoff ages, and whether a resent handoff "
    "still falls within the server's 2-minute duplicate window"
)
NTP_FIX = "keep the clock synchronised (e.g. `timedatectl set-ntp true`, or chrony)"


def _skew_status(seconds: float) -> Status:
    gap = abs(seconds)
    return "FAIL" if gap > SKEW_FAIL else "warn" if gap > SKEW_WARN else "ok"


def _apart(seconds: float) -> str:
    return f"{abs(seconds):.1f} s {'ahead of' if seconds > 0 else 'behind'}"


def check_clock(clock: ServerClock) -> Check:
    """This host's clock agrees with the NATS server's (measured by a stored probe)."""
    ours = -clock.offset  # how far our clock is ahead of the server's
    status = _skew_status(ours)
    detail = f"this host's clock is {_apart(ours)} the server's (±{clock.uncertainty:.2f} s)"
    if status == "ok":
        return Check("clock", "ok", detail)
    return Check("clock", status, f"{detail}: {SKEW_WHY}", NTP_FIX)


def check_host_clocks(seen: list[HostSeen], mine: str) -> Check:
    """Every other reachable host's clock agrees with the server's: the time it wrote in
    its last beat against the time the server received it."""
    others = [h for h in seen if h.reachable and h.beat.key != mine]
    if not others:
        return Check("host clocks", "ok", "no other host beating to compare")
    worst = max(others, key=lambda h: abs(h.skew))
    off = [h for h in others if _skew_status(-h.skew) != "ok"]
    if not off:
        return Check("host clocks", "ok", f"{len(others)} other host(s) within {SKEW_WARN:g} s")
    status = _skew_status(-worst.skew)
    named = ", ".join(f"{h.beat.host} is {_apart(-h.skew)} the server" for h in off)
    fix = f"on {', '.join(h.beat.host for h in off)}: {NTP_FIX}"
    return Check("host clocks", status, f"{named}: {SKEW_WHY}", fix)
