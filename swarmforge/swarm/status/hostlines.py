"""What `status` and the views say of other hosts and their roles, in words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.times import duration

if TYPE_CHECKING:
    pass
from swarmforge.swarm.status.crosshost import CrossHost, HostView, RemoteRole


def beat_said(role: RemoteRole) -> str:
    """Another host's role's state as shown: its state, or unreachable and since when."""
    if role.reachable:
        return role.state
    if role.beat_age_seconds is None:
        return "unreachable (never seen)"
    return f"unreachable (last beat {duration(role.beat_age_seconds)} ago)"


def host_said(host: HostView) -> str:
    """Whether a host beats, and when it last did: `reachable, last beat 2s ago`."""
    if host.age_seconds is None:
        return "no beat sent yet" if host.this else "unreachable, never seen"
    state = "reachable" if host.reachable else "unreachable"
    return f"{state}, last beat {duration(host.age_seconds)} ago"


def hosts_line(cross: CrossHost) -> str:
    """Every host of the swarm on one line, or why the other hosts are not shown."""
    if cross.error is not None:
        return f"other hosts not shown: {cross.error}"
    shown = (f"{h.host}{' (this host)' if h.this else ''} {host_said(h)}" for h in cross.hosts)
    return "hosts: " + " · ".join(shown)


def elsewhere(role: RemoteRole) -> str:
    """What an action on another host's role answers: it runs there, not here."""
    return (
        f"{role.role} runs on host {role.host}: its output, diff, handoff and terminal "
        f"are on that host, not here."
    )
