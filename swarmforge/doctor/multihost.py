"""`doctor` for a swarm on several hosts: the hub, the clocks, the other hosts, and the
consumers through which this host's roles take their mail.

Only a project with `[transport]` gets these checks. They reach the NATS server with a
short time limit of their own; when it cannot be reached they say nothing more, since
the transport check already says why.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from swarmforge.config import sessionrecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import Settings, load_settings
from swarmforge.config.transportsettings import TransportSettings
from swarmforge.doctor.check import Check, Status
from swarmforge.errors import CorruptFile
from swarmforge.git import command
from swarmforge.net.hub import QUIET

if TYPE_CHECKING:
    from swarmforge.net.presence import HostSeen, ServerClock
    from swarmforge.net.transport import Transport

HUB_TIMEOUT = 10.0  # seconds `git ls-remote` may take to answer
CONNECT_TIMEOUT = 2.0
SKEW_WARN = 2.0  # seconds between two clocks that are worth a warning
SKEW_FAIL = 30.0
SKEW_WHY = (
    "times compared across hosts mislead: handoff ages, and whether a resent handoff "
    "still falls within the server's 2-minute duplicate window"
)
NTP_FIX = "keep the clock synchronised (e.g. `timedatectl set-ntp true`, or chrony)"


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
        from swarmforge.net import presence
        from swarmforge.net.transport import Transport, TransportError
    except ImportError:
        return checks  # the transport check says how to install it
    try:
        record = sessionrecord.load(root)
    except CorruptFile:
        record = None  # the run check names the fault
    client = Transport.from_settings(found.transport, root, env)
    try:
        client.connect(CONNECT_TIMEOUT)
        clock = presence.server_clock(client)
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


# -- the hub ----------------------------------------------------------------------------


def check_hub(root: str, transport: TransportSettings, timeout: float = HUB_TIMEOUT) -> Check:
    """`[transport] hub` is set and answers `git ls-remote` from this host."""
    hub = transport.hub
    if hub is None:
        fix = "set [transport] hub to the git repository every host fetches from and pushes to"
        return Check("hub", "warn", "no [transport] hub: the hosts' branches meet nowhere", fix)
    answer = _ls_remote(root, hub, timeout)
    if answer is None:
        fix = "check the URL, the network, and that this host may fetch without a prompt"
        return Check("hub", "FAIL", f"{hub} did not answer within {timeout:g} s", fix)
    if answer:
        fix = "check the URL, and that this host can fetch from it (ssh key, access rights)"
        return Check("hub", "FAIL", f"{hub} cannot be reached: {answer}", fix)
    return Check("hub", "ok", f"{hub} answers (git ls-remote)")


def _ls_remote(root: str, hub: str, timeout: float) -> str | None:
    """ "" when `git ls-remote` reaches `hub`, the last line it said when it could not,
    None when it did not answer in time.

    It runs in a session of its own, without a terminal: ssh and git then fail at once
    where they would ask for a password, instead of waiting for one. A relative hub is
    relative to the project, as git sees it from there.
    """
    try:
        result = command.within(root, "ls-remote", hub, "HEAD", timeout=timeout, extra=QUIET)
    except OSError as exc:
        return f"cannot run git: {exc.strerror}"
    if result is None:
        return None
    if result.ok:
        return ""
    said = [line for line in result.stderr.decode(errors="replace").splitlines() if line.strip()]
    return said[-1].strip() if said else f"git ls-remote exited {result.returncode}"


# -- clocks -----------------------------------------------------------------------------


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


# -- the hosts --------------------------------------------------------------------------


def _my_key(record: SessionRecord | None) -> str:
    from swarmforge.net.presence import host_key

    return host_key(record.host if record else None)


def _expected(found: Settings, record: SessionRecord | None) -> dict[str, str]:
    """The hosts the swarm names (settings and session record), key to name; the host that
    runs `up` without --host is always one of them."""
    from swarmforge.net.presence import host_key

    names = {host_key(None): ""}
    names |= {host_key(r.host): r.host for r in found.roles.values() if r.host is not None}
    if record is not None:
        names |= {host_key(h or None): h for h in record.remote.values()}
    return names


def check_hosts(
    seen: list[HostSeen], expected: dict[str, str], mine: str, record: SessionRecord | None
) -> list[Check]:
    """Each known host beats (warn for one that stopped, or never started)."""
    from swarmforge.net.presence import wire_name
    from swarmforge.times import duration

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
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(host.received_at))
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


# -- consumers --------------------------------------------------------------------------


def check_consumers(client: Transport, record: SessionRecord | None) -> Check:
    """The durable consumers of this host's roles, where they exist, take each role's own
    mail with explicit acknowledgement (anything else loses or mixes mail)."""
    from nats.js import api
    from nats.js.errors import NotFoundError

    from swarmforge.net.transport import consumer_name, stream_name, subject

    if record is None or not record.roles:
        return Check("consumers", "ok", "no roles run on this host")
    stream = stream_name(client.project)
    problems, made = [], 0
    for role in record.roles:
        durable = consumer_name(client.project, role.name)

        async def look(durable: str = durable) -> api.ConsumerInfo | None:
            try:
                found: api.ConsumerInfo = await client.js.consumer_info(stream, durable)
            except NotFoundError:
                return None  # not made yet, or no stream yet
            return found

        info = client.call(look(), f"look up the consumer {durable}")
        if info is None:
            continue
        made += 1
        config, want = info.config, subject(client.project, role.name)
        if config.ack_policy != api.AckPolicy.EXPLICIT:
            problems.append(f"{durable}: ack policy {config.ack_policy}, expected explicit")
        if config.filter_subject != want:
            problems.append(f"{durable}: filter subject {config.filter_subject}, expected {want}")
    if problems:
        fix = f"remove it (nats consumer rm {stream} NAME): the daemon makes it again as expected"
        return Check("consumers", "FAIL", "; ".join(problems), fix)
    waiting = len(record.roles) - made
    later = f", {waiting} not made yet (made when mail first comes)" if waiting else ""
    return Check("consumers", "ok", f"{made} consumer(s) of this host's roles as expected{later}")
