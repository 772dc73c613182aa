"""`status` across hosts: the roles other hosts run, from their heartbeats
(swarmforge/net/presence.py).

Only a project with `[transport]` gets here, and only then is nats-py imported. A role
is never left out because its host went quiet: a host whose last beat is too old shows
its roles as unreachable, with the age of that beat, and a role the session record places
on another host that no beat mentions shows as unreachable, never seen.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import load_settings
from swarmforge.config.transportsettings import TransportSettings
from swarmforge.errors import CorruptFile

if TYPE_CHECKING:
    from swarmforge.net.presence import HostSeen
from swarmforge.swarm.status.crosshost import UNREACHABLE, CrossHost, HostView, RemoteRole

CONNECT_TIMEOUT = 1.5  # seconds: status must not hang on a server that is away


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
