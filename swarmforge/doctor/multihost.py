"""`doctor` for a swarm on several hosts: which checks run, over one connection to NATS.

The hub, the clocks, the other hosts, and the consumers through which this host's
roles take their mail.

Only a project with `[transport]` gets these checks. They reach the NATS server with a
short time limit of their own; when it cannot be reached they say nothing more, since
the transport check already says why.
"""

from __future__ import annotations

from collections.abc import Mapping

from swarmforge.config import sessionrecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import Settings, load_settings
from swarmforge.doctor.check import Check
from swarmforge.doctor.clocks import check_clock, check_host_clocks
from swarmforge.doctor.consumers import check_consumers
from swarmforge.doctor.hosts import check_hosts
from swarmforge.doctor.hub import check_hub
from swarmforge.errors import CorruptFile

CONNECT_TIMEOUT = 2.0


def host_checks(root: str, env: Mapping[str, str] | None = None) -> list[Check]:
    """The checks of a swarm on several hosts; none without `[transport]`."""
    try:
        found = load_settings(root)
    except CorruptFile:
        return []  # the transport check names the fault
    if found.transport is None:
        return []
    checks = [check_hub(root, found.transport)]
    try:
        from swarmforge.net import presence, serverclock
        from swarmforge.net.failure import TransportError
        from swarmforge.net.transport import Transport
    except ImportError:
        return checks  # the transport check says how to install it
    try:
        record = sessionrecord.load(root)
    except CorruptFile:
        record = None  # the run check names the fault
    client = Transport.from_settings(found.transport, root, env)
    try:
        client.connect(CONNECT_TIMEOUT)
        clock = serverclock.server_clock(client)
        seen = presence.hosts(client, clock=clock)
        checks.append(check_clock(clock))
        checks.append(check_host_clocks(seen, _my_key(record)))
        checks += check_hosts(seen, _expected(found, record), _my_key(record), record)
        checks.append(check_consumers(client, record))
    except TransportError:
        pass  # the transport check says why
    finally:
        client.close()
    return checks


def _my_key(record: SessionRecord | None) -> str:
    from swarmforge.net.beats import host_key

    return host_key(record.host if record else None)


def _expected(found: Settings, record: SessionRecord | None) -> dict[str, str]:
    """The hosts the swarm names (settings and session record), key to name; the host that
    runs `up` without --host is always one of them."""
    from swarmforge.net.beats import host_key

    names = {host_key(None): ""}
    names |= {host_key(r.host): r.host for r in found.roles.values() if r.host is not None}
    if record is not None:
        names |= {host_key(h or None): h for h in record.remote.values()}
    return names
