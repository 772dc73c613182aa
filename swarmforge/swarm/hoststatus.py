"""`status` across hosts: the roles other hosts run, from their heartbeats
(swarmforge/net/presence.py).

Only a project with `[transport]` gets here, and only then is nats-py imported. A role
is never left out because its host went quiet: a host whose last beat is too old shows
its roles as unreachable, with the age of that beat, and a role the session record places
on another host that no beat mentions shows as unreachable, never seen.
"""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import load_settings
from swarmforge.config.transportsettings import TransportSettings
from swarmforge.errors import CorruptFile
from swarmforge.times import duration

if TYPE_CHECKING:
    from swarmforge.net.presence import HostSeen

CONNECT_TIMEOUT = 1.5  # seconds: status must not hang on a server that is away
UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class RemoteRole:
    """A role another host runs, as its last beat (if any) says."""

    role: str
    host: str
    reachable: bool
    state: str  # its state on its host, or `unreachable`
    port: int | None = None
    branch: str | None = None
    beat_age_seconds: int | None = None  # None: no beat ever mentioned it

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "remote": True}


@dataclass(frozen=True)
class HostView:
    """One host of the swarm: whether it beats, and since when."""

    host: str
    this: bool  # the host status runs on
    reachable: bool
    age_seconds: int | None  # of its last beat; None: never seen
    machine: str | None = None
    pid: int | None = None  # its delivery daemon
    roles: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "roles": list(self.roles)}


@dataclass(frozen=True)
class CrossHost:
    """Every host of the swarm and the roles the others run; `error` when the server
    could not be asked (then only this host's roles are known)."""

    this_host: str
    roles: list[RemoteRole]
    hosts: list[HostView]
    error: str | None = None

    def extend_json(self, shown: dict[str, object], local: list[dict[str, object]]) -> None:
        """Add the hosts to `status --json`: a `host` per role, the other hosts' roles, `hosts`."""
        for role in local:
            role["host"] = self.this_host
        shown["roles"] = local + [role.as_json() for role in self.roles]
        shown["hosts"] = [host.as_json() for host in self.hosts]
        shown["transport_error"] = self.error


def transport_settings(root: str) -> TransportSettings | None:
    """The project's `[transport]`; None without one, or when swarmforge.toml cannot be
    read (`up` names the fault; a status view still works)."""
    try:
        return load_settings(root).transport
    except CorruptFile:
        return None


def cross_host(
    root: str,
    record: SessionRecord | None,
    within: float | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> CrossHost | None:
    """The other hosts' roles and every host's state; None without `[transport]`.

    `within`: the age under which a host counts as reachable (default presence's).
    """
    settings = transport_settings(root)
    if settings is None:
        return None
    this_host = socket.gethostname() if record is None or record.host is None else record.host
    try:
        from swarmforge.net import presence
        from swarmforge.net.failure import TransportError
        from swarmforge.net.transport import Transport
    except ImportError:
        error = "[transport] is set but nats-py is missing (pip install 'swarmforge[nats]')"
        return CrossHost(this_host, [], [], error)
    client = Transport.from_settings(settings, root)
    try:
        client.connect(connect_timeout)
        seen = presence.hosts(client, presence.REACHABLE_WITHIN if within is None else within)
    except TransportError as exc:
        return CrossHost(this_host, [], [], exc.message)
    finally:
        client.close()
    return _combine(this_host, record, seen)


def _combine(this_host: str, record: SessionRecord | None, seen: list[HostSeen]) -> CrossHost:
    """The roles and hosts status shows, from the session record and the beats."""
    from swarmforge.net import beats

    mine = beats.host_key(record.host if record else None)
    local = {r.name for r in record.roles} if record else set()
    remote = dict(record.remote) if record else {}
    roles: list[RemoteRole] = []
    views = []
    for host in seen:
        age = int(host.age)
        views.append(_view(host, mine))
        if host.beat.key == mine:
            continue
        for role in host.beat.roles:
            if role.name in local:
                continue  # a beat from before the role moved to this host
            state = beats.role_state(role) if host.reachable else UNREACHABLE
            roles.append(
                RemoteRole(
                    role.name, host.beat.host, host.reachable, state, role.port, role.branch, age
                )
            )
            remote.pop(role.name, None)
    keys = {host.beat.key for host in seen}
    for name, host_name in remote.items():
        shown = host_name or "(the host without --host)"
        roles.append(RemoteRole(name, shown, False, UNREACHABLE))
        key = beats.host_key(host_name or None)
        if key not in keys:
            keys.add(key)
            views.append(HostView(shown, False, False, None))
    if mine not in keys:
        views.insert(0, HostView(this_host, True, False, None, socket.gethostname()))
    return CrossHost(this_host, sorted(roles, key=lambda r: (r.host, r.role)), views)


def _view(host: HostSeen, mine: str) -> HostView:
    """How status shows one host that beat."""
    beat = host.beat
    roles = tuple(r.name for r in beat.roles)
    this = beat.key == mine
    return HostView(beat.host, this, host.reachable, int(host.age), beat.machine, beat.pid, roles)


# -- what status and the views say of them ------------------------------------------------


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
