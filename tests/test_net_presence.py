"""Hosts of one swarm: heartbeats and port leases (swarmforge/net/presence.py), `status`
across hosts and the doctor's host checks, against a real nats-server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarmforge.config import sessionrecord
from swarmforge.config.transportsettings import TransportSettings
from swarmforge.doctor.clocks import check_clock, check_host_clocks
from swarmforge.doctor.hosts import check_hosts
from swarmforge.doctor.hub import check_hub
from swarmforge.doctor.multihost import host_checks
from swarmforge.swarm.status import crosshost, heartbeats
from tests.natsserver import NatsServer, free_port, nats_server, require_nats
from tests.support import (
    PROJECT,
    Project,
    beat_of,
    git,
    place_elsewhere,
    record_run,
    retry_until,
    with_transport,
)
from tests.support import run_cli as sf

__all__ = ["nats_server"]  # the fixture, used by name


@pytest.fixture
def transport(nats_server: NatsServer) -> Iterator[Any]:
    from swarmforge.net.transport import Transport

    with Transport(nats_server.url, PROJECT) as client:
        yield client


@pytest.fixture
def other(nats_server: NatsServer) -> Iterator[Any]:
    """A second connection: the view of another host."""
    from swarmforge.net.transport import Transport

    with Transport(nats_server.url, PROJECT) as client:
        yield client


# -- heartbeats -------------------------------------------------------------------------


def test_a_hosts_beat_is_seen_by_another_host(project: Project, transport: Any, other: Any) -> None:
    from swarmforge.daemon import heartbeat
    from swarmforge.net import presence

    record_run(project)
    mine = heartbeat.local_beat(str(project.root), pid=99)
    assert mine is not None and mine.primary and mine.host == socket.gethostname()
    assert [(r.name, r.port) for r in mine.roles] == [
        ("coder", 4000),
        ("cleaner", 4001),
        ("qa", 4002),
    ]
    presence.beat(transport, mine)
    [seen] = presence.hosts(other)
    assert seen.reachable and seen.beat == mine
    assert seen.beat.roles[0].branch == "swarm/test/coder"


def test_without_a_run_record_there_is_no_beat(tmp_path: Path) -> None:
    pytest.importorskip("nats")
    from swarmforge.daemon import heartbeat

    assert heartbeat.local_beat(str(tmp_path), 1) is None


def test_a_host_that_stops_beating_turns_unreachable_and_stays_shown(
    transport: Any, other: Any
) -> None:
    from swarmforge.net import presence

    presence.beat(transport, beat_of("box-b", {"qa": 5000}))
    retry_until(lambda: not presence.hosts(other, within=0.2)[0].reachable)
    [gone] = presence.hosts(other, within=0.2)
    assert gone.beat.host == "box-b" and gone.beat.roles[0].port == 5000
    checks = check_hosts(presence.hosts(other, within=0.2), {}, "primary", None)
    assert [(c.check, c.status) for c in checks] == [("host box-b", "warn")]
    assert "unreachable since its last beat at" in checks[0].detail
    assert "swarmforge up --host box-b" in checks[0].fix
    assert presence.hosts(other)[0].reachable  # within the default threshold still


def test_live_hosts_lease_their_ports_to_no_one_else(transport: Any, other: Any) -> None:
    from swarmforge.net import presence

    presence.beat(transport, beat_of("main", {"coder": 4000, "qa": 4001}, primary=True))
    presence.beat(other, beat_of("box-b", {"cleaner": 5000}))
    assert presence.leased_ports(other, "box-b") == {4000, 4001}
    assert presence.leased_ports(transport, None) == {5000}
    assert presence.leased_ports(transport, "box-c") == {4000, 4001, 5000}
    retry_until(lambda: presence.leased_ports(transport, None, within=0.2) == set())


def test_the_servers_clock_is_read_from_a_stored_probe(transport: Any) -> None:
    from swarmforge.net import serverclock

    clock = serverclock.server_clock(transport)
    assert clock.uncertainty >= 0
    check = check_clock(clock)
    assert check.status == "ok", check  # the server runs on this machine, on its clock


def test_another_hosts_clock_is_judged_by_the_servers_receive_time(
    transport: Any, other: Any
) -> None:
    from swarmforge.net import presence

    presence.beat(transport, beat_of("box-b", {"qa": 5000}))
    check = check_host_clocks(presence.hosts(other), "primary")
    assert check.status == "ok", check
    presence.beat(transport, beat_of("box-b", {"qa": 5000}, sent_at=time.time() - 100))
    presence.beat(transport, beat_of("box-c", {"lint": 5001}, sent_at=time.time() + 5))
    check = check_host_clocks(presence.hosts(other), "primary")
    assert check.status == "FAIL" and "box-b is 100" in check.detail and "behind" in check.detail
    assert "box-c is 5" in check.detail and "duplicate window" in check.detail
    assert "\n" not in check.detail and check.fix.startswith("on box-b, box-c:")


# -- status across hosts ----------------------------------------------------------------


def remote_swarm(project: Project, transport: Any, url: str) -> None:
    """coder and cleaner here; qa on box-b, which beats; lint on box-c, never seen."""
    from swarmforge.net import presence

    with_transport(project, url)
    record_run(project)
    place_elsewhere(project, {"qa": "box-b", "lint": "box-c"}, keep=("coder", "cleaner"))
    presence.beat(transport, beat_of("box-b", {"qa": 5001}, agent="working"))


def test_status_shows_the_roles_of_other_hosts(
    project: Project, transport: Any, nats_server: NatsServer
) -> None:
    from swarmforge.net import presence

    remote_swarm(project, transport, nats_server.url)
    shown = json.loads(sf("status", "--json", cwd=project.root).stdout)
    roles = {r["role"]: r for r in shown["roles"]}
    assert roles["coder"]["host"] == socket.gethostname() and roles["coder"]["port"] == 4000
    qa = roles["qa"]
    assert (qa["host"], qa["port"], qa["state"], qa["reachable"]) == (
        "box-b",
        5001,
        "working",
        True,
    )
    assert qa["branch"] == "swarm/test/qa" and qa["beat_age_seconds"] is not None
    lint = roles["lint"]
    assert (lint["host"], lint["state"], lint["beat_age_seconds"]) == ("box-c", "unreachable", None)
    hosts = {h["host"]: h for h in shown["hosts"]}
    assert hosts["box-b"]["reachable"] and hosts["box-b"]["roles"] == ["qa"]
    assert not hosts["box-c"]["reachable"] and hosts["box-c"]["age_seconds"] is None
    assert hosts[socket.gethostname()]["this"] and shown["transport_error"] is None
    # box-b beats again, as its daemon does every few seconds: reachable however long
    # the first `status` took.
    presence.beat(transport, beat_of("box-b", {"qa": 5001}, agent="working"))
    text = sf("status", cwd=project.root)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert any(
        line.split()[:6] == ["qa", "on", "box-b", "port", "5001", "working"] for line in lines
    )
    assert any(line.split()[0] == "lint" and "unreachable (never seen)" in line for line in lines)
    assert any(line.strip().startswith("coder") and "port 4000" in line for line in lines)


def test_a_role_whose_host_stopped_beating_is_unreachable_with_its_last_beat(
    project: Project, transport: Any, nats_server: NatsServer
) -> None:
    from swarmforge.cli.status_cmd import cross_host_lines

    remote_swarm(project, transport, nats_server.url)
    record = sessionrecord.load(str(project.root))

    found: list[crosshost.CrossHost] = []

    def gone() -> bool:
        cross = heartbeats.cross_host(str(project.root), record, within=0.2)
        assert cross is not None
        found[:] = [cross]
        return not next(r for r in cross.roles if r.role == "qa").reachable

    retry_until(gone)
    qa = next(r for r in found[0].roles if r.role == "qa")
    assert qa.state == "unreachable" and qa.beat_age_seconds is not None
    lines = cross_host_lines(found[0])
    assert any(line.startswith("qa") and "unreachable (last beat" in line for line in lines)
    assert any(line.startswith("host box-b: unreachable, last beat") for line in lines)


def test_status_with_the_server_away_shows_the_local_roles_and_one_line(
    project: Project,
) -> None:
    require_nats()
    with_transport(project, f"nats://127.0.0.1:{free_port()}")
    record_run(project)
    place_elsewhere(project, {"qa": "box-b"}, keep=("coder", "cleaner"))
    shown = sf("status", cwd=project.root)
    assert shown.returncode == 0, shown.stderr
    said = [line for line in shown.stdout.splitlines() if "other hosts" in line]
    assert len(said) == 1 and "connection refused" in said[0]
    assert any(line.strip().startswith("coder") for line in shown.stdout.splitlines())
    as_json = json.loads(sf("status", "--json", cwd=project.root).stdout)
    assert "connection refused" in as_json["transport_error"]
    assert [r["role"] for r in as_json["roles"]] == ["coder", "cleaner"]


# -- doctor -----------------------------------------------------------------------------


def test_doctor_reaches_the_hub_or_says_why_not(project: Project, tmp_path: Path) -> None:
    hub = tmp_path / "hub.git"
    git(tmp_path, "clone", "-q", "--bare", str(project.root), str(hub))
    ok = check_hub(str(project.root), TransportSettings(url="nats://h", hub=str(hub)))
    assert ok.status == "ok", ok
    missing = TransportSettings(url="nats://h", hub=str(tmp_path / "nowhere.git"))
    bad = check_hub(str(project.root), missing)
    assert bad.status == "FAIL" and "nowhere.git cannot be reached" in bad.detail
    assert "\n" not in bad.detail and bad.fix
    remotes = git(project.root, "remote")
    assert remotes == ""  # nothing added to the user's repository


def test_doctor_checks_hosts_clocks_and_consumers(
    project: Project, transport: Any, nats_server: NatsServer, tmp_path: Path
) -> None:
    from nats.js import api

    from swarmforge.net.subjects import consumer_name, stream_name, subject

    hub = tmp_path / "hub.git"
    git(tmp_path, "clone", "-q", "--bare", str(project.root), str(hub))
    remote_swarm(project, transport, nats_server.url)
    with_transport(project, nats_server.url, str(hub))
    transport.ensure_stream()
    transport.consumer("coder")
    wrong = api.ConsumerConfig(
        durable_name=consumer_name(PROJECT, "cleaner"),
        ack_policy=api.AckPolicy.EXPLICIT,
        filter_subject=subject(PROJECT, "someone-else"),
    )
    transport.call(transport.js.add_consumer(stream_name(PROJECT), wrong), "add")
    checks = {c.check: c for c in host_checks(str(project.root), {})}
    assert checks["hub"].status == "ok" and checks["clock"].status == "ok"
    assert checks["host box-b"].status == "ok" and "reachable" in checks["host box-b"].detail
    box_c = checks["host box-c"]
    assert box_c.status == "warn" and "never seen" in box_c.detail
    assert "swarmforge up --host box-c" in box_c.fix
    mine = checks[f"host {socket.gethostname()}"]  # running, but no daemon beats here
    assert mine.status == "warn" and "daemon" in mine.fix
    consumers = checks["consumers"]
    assert consumers.status == "FAIL" and "cleaner" in consumers.detail
    assert "coder" not in consumers.detail and "\n" not in consumers.detail


def test_doctor_has_no_host_checks_without_transport(project: Project) -> None:
    assert host_checks(str(project.root)) == []


# -- without [transport] ----------------------------------------------------------------


def test_status_and_doctor_without_transport_never_import_nats(project: Project) -> None:
    record_run(project)
    code = (
        "import contextlib, io, json, sys\n"
        "from swarmforge.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    main(['status', '--json', '--project', {str(project.root)!r}])\n"
        f"    main(['status', '--project', {str(project.root)!r}])\n"
        f"    main(['doctor', '--project', {str(project.root)!r}])\n"
        "assert not [m for m in sys.modules if m == 'nats' or m.startswith('nats.')]\n"
        "shown = json.loads(out.getvalue().split('\\n}\\n')[0] + '}')\n"
        "assert 'hosts' not in shown and 'transport_error' not in shown\n"
        "assert all('host' not in role for role in shown['roles'])\n"
        "assert 'other hosts' not in out.getvalue() and '(this host)' not in out.getvalue()\n"
        "assert not any(l.split()[1:2] == ['hub'] for l in out.getvalue().splitlines())\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
