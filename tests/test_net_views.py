"""The live views across hosts: `watch` and `cockpit` show the roles of the swarm's other
hosts, from heartbeats on a real nats-server.

As in test_net_presence.py, another host is a beat put in the bucket by hand (no second
machine, no daemon): qa runs on box-b, which beats; lint on box-c, which never did.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, expect
from textual.widgets import DataTable, Static

from swarmforge.swarm.status import hostlines
from swarmforge.swarm.status.crosshost import CrossHost, HostView, RemoteRole
from swarmforge.views.aging import aged
from swarmforge.views.feed import Feed
from swarmforge.views.snapshot import Snapshot
from swarmforge.views.watch.app import WatchApp
from swarmforge.views.watch.textscreen import TextScreen
from tests.natsserver import NatsServer, free_port, nats_server, require_nats
from tests.support import PROJECT, Project, beat_of, place_elsewhere, record_run, with_transport
from tests.viewsupport import EVERY, WAIT, cells, get, served, until

__all__ = ["nats_server"]  # the fixtures, used by name

HERE = socket.gethostname()
ELSEWHERE = "qa runs on host box-b: its output, diff, handoff and terminal are on that host"


@pytest.fixture
def two_hosts(project: Project, nats_server: NatsServer) -> Iterator[Project]:
    """coder and cleaner here; qa on box-b, which beats; lint on box-c, never seen."""
    from swarmforge.net import presence
    from swarmforge.net.transport import Transport

    with_transport(project, nats_server.url)
    record_run(project)
    place_elsewhere(project, {"qa": "box-b", "lint": "box-c"}, keep=("coder", "cleaner"))
    with Transport(nats_server.url, PROJECT) as client:
        presence.beat(client, beat_of("box-b", {"qa": 5001}, agent="working"))
    yield project


def notices(app: WatchApp) -> list[str]:
    """The texts of the notifications shown (toasts) on the current screen; the pilot
    draws them only when run with `notifications=True`."""
    return [str(toast.render()) for toast in app.screen.query("Toast")]


# -- watch ------------------------------------------------------------------------------


def test_watch_shows_the_roles_of_other_hosts_and_the_hosts(two_hosts: Project) -> None:
    async def drive() -> None:
        app = WatchApp(str(two_hosts.root), every=EVERY)
        async with app.run_test(size=(200, 40), notifications=True) as pilot:
            await until(pilot, lambda: len(cells(app, "qa@box-b")) > 0)
            assert cells(app, "qa@box-b") == [
                *("qa", "box-b", "working", "-", "-", "-", "-"),
                *("5001", "swarm/test/qa", "-", "-", "-"),
            ]
            lint = cells(app, "lint@box-c")
            assert lint[:3] == ["lint", "box-c", "unreachable (never seen)"]
            assert lint[7:9] == ["-", "-"]  # no beat: no port, no branch known
            coder = cells(app, "coder")
            assert coder[:2] == ["coder", HERE] and coder[7:9] == ["4000", "swarm/test/coder"]
            hosts = str(app.query_one("#hosts", Static).content)
            assert (
                "box-b reachable, last beat" in hosts and "box-c unreachable, never seen" in hosts
            )
            assert "+2 on other hosts" in str(app.query_one("#summary", Static).content)

            # Every key that acts on a role answers on a remote row with its host.
            table: DataTable[str] = app.query_one(DataTable)
            keys = [str(k.value) for k in table.rows]
            table.move_cursor(row=keys.index("qa@box-b"))
            for key in ("o", "d", "h", "a"):
                app.clear_notifications()
                await pilot.press(key)
                await until(pilot, lambda: any(ELSEWHERE in n for n in notices(app)))
                assert not isinstance(app.screen, TextScreen)
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)

    asyncio.run(drive())


def test_watch_with_the_server_away_says_so_in_one_line(project: Project) -> None:
    require_nats()
    with_transport(project, f"nats://127.0.0.1:{free_port()}")
    record_run(project)
    place_elsewhere(project, {"qa": "box-b"}, keep=("coder", "cleaner"))

    async def drive() -> None:
        app = WatchApp(str(project.root), every=EVERY)
        async with app.run_test(size=(200, 40)) as pilot:
            await until(pilot, lambda: len(cells(app, "cleaner")) > 0)
            hosts = str(app.query_one("#hosts", Static).content)
            assert hosts.startswith("other hosts not shown:") and "connection refused" in hosts
            assert "\n" not in hosts
            assert cells(app, "coder")[7] == "4000"
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)

    asyncio.run(drive())


def test_the_feed_asks_the_server_only_now_and_then_and_ages_what_it_was_told(
    two_hosts: Project, nats_server: NatsServer
) -> None:
    from swarmforge.net import presence
    from swarmforge.net.transport import Transport

    feed = Feed(str(two_hosts.root), hosts_every=3600)
    first, _ = feed.read()
    assert isinstance(first, Snapshot) and first.cross is not None
    assert [r.role for r in first.cross.roles] == ["qa", "lint"]
    with Transport(nats_server.url, PROJECT) as client:
        presence.beat(client, beat_of("box-d", {"docs": 5003}))
    again, _ = feed.read()  # within the hour: the hosts as first asked
    assert isinstance(again, Snapshot) and again.cross is not None
    assert "docs" not in {r.role for r in again.cross.roles}
    asked = Feed(str(two_hosts.root), hosts_every=0).read()[0]
    assert isinstance(asked, Snapshot) and asked.cross is not None
    assert ("docs", "box-d", 5003) in {(r.role, r.host, r.port) for r in asked.cross.roles}


def test_a_role_unreachable_since_its_last_beat_says_how_long() -> None:
    gone = RemoteRole("qa", "box-b", False, "unreachable", 5001, "swarm/x/qa", 700)
    cross = CrossHost(
        "box-a",
        [gone],
        [HostView("box-a", True, True, 1), HostView("box-b", False, False, 700)],
    )
    later = aged(cross, 20)
    assert later.roles[0].beat_age_seconds == 720 and later.hosts[0].age_seconds == 21
    assert hostlines.beat_said(later.roles[0]) == "unreachable (last beat 12m ago)"
    assert hostlines.hosts_line(later) == (
        "hosts: box-a (this host) reachable, last beat 21s ago · "
        "box-b unreachable, last beat 12m ago"
    )
    assert aged(cross, 0) is cross
    away = CrossHost("box-a", [], [], "cannot connect to nats://h:1: connection refused")
    assert hostlines.hosts_line(away) == f"other hosts not shown: {away.error}"


def test_the_views_data_without_transport_never_imports_nats(project: Project) -> None:
    record_run(project)
    code = (
        "import sys\n"
        "from swarmforge.views.cockpit.state import swarm_state\n"
        "from swarmforge.views.feed import Feed\n"
        f"feed = Feed({str(project.root)!r})\n"
        "snap, _ = feed.read()\n"
        "assert not isinstance(snap, str) and snap.cross is None, snap\n"
        f"shown = swarm_state({str(project.root)!r}, snap)\n"
        "assert 'hosts' not in shown and all('host' not in r for r in shown['rows'])\n"
        "assert not [m for m in sys.modules if m == 'nats' or m.startswith('nats.')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- cockpit ----------------------------------------------------------------------------


def first_state(url: str) -> dict[str, Any]:
    """The first state the cockpit's stream sends a page."""
    with urllib.request.urlopen(url + "stream", timeout=30) as stream:
        kind = ""
        for raw in stream:
            line = raw.decode().strip()
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind == "state":
                found: dict[str, Any] = json.loads(line.split(":", 1)[1])
                return found
    raise AssertionError("the stream ended before a state")


def test_the_cockpits_state_has_the_other_hosts_and_their_roles_answer_with_it(
    two_hosts: Project,
) -> None:
    with served(two_hosts.root) as started:
        url = str(started["url"])
        state = first_state(url)
        rows = {r["role"]: r for r in state["rows"]}
        qa = rows["qa"]
        assert (qa["host"], qa["remote"], qa["reachable"], qa["state"]) == (
            "box-b",
            True,
            True,
            "working",
        )
        assert (qa["port"], qa["branch"]) == (5001, "swarm/test/qa")
        assert ELSEWHERE in qa["elsewhere"]
        lint = rows["lint"]
        assert (lint["host"], lint["reachable"], lint["beat_age_seconds"]) == ("box-c", False, None)
        assert rows["coder"]["host"] == HERE and not rows["coder"].get("remote")
        hosts = {h["host"]: h for h in state["hosts"]}
        assert hosts["box-b"]["reachable"] and not hosts["box-c"]["reachable"]
        assert state["transport_error"] is None
        for what in ("output", "diff", "handoff"):
            code, text = get(f"{url}roles/qa/{what}")
            assert code == 200 and ELSEWHERE in text and "\n" not in text.strip()
        code, text = get(f"{url}roles/coder/diff")
        assert code == 200 and ELSEWHERE not in text


def test_the_cockpit_page_shows_the_other_hosts(two_hosts: Project, browser: Browser) -> None:
    with served(two_hosts.root) as started:
        page = browser.new_page()
        page.goto(str(started["url"]))
        qa = page.locator('tr[data-key="qa@box-b"]')
        expect(qa.locator("td[data-col=host]")).to_have_text("box-b", timeout=WAIT)
        expect(qa.locator("td[data-col=state]")).to_have_text("working")
        expect(qa.locator("td[data-col=port]")).to_have_text("5001")
        expect(qa.locator("td[data-col=queued]")).to_have_text("-")
        expect(qa.locator("td[data-col=spent]")).to_have_text("-")
        lint = page.locator('tr[data-key="lint@box-c"] td[data-col=state]')
        expect(lint).to_have_text("unreachable (never seen)")
        coder = page.locator("tr[data-role=coder] td[data-col=host]")
        expect(coder).to_have_text(HERE)
        expect(coder).to_be_visible()
        hosts = page.locator("#hosts")
        expect(hosts.locator('[data-host="box-b"]')).to_contain_text("reachable")
        expect(hosts.locator('[data-host="box-c"]')).to_contain_text("unreachable, never seen")

        qa.click()
        expect(page.locator("#detail-text")).to_contain_text(ELSEWHERE, timeout=WAIT)
        expect(page.locator("#attach-line")).to_be_hidden()
        page.click("button[data-show=diff]")
        expect(page.locator("#detail-text")).to_contain_text(ELSEWHERE)
        page.close()


def test_without_transport_the_page_has_no_host_column(project: Project, browser: Browser) -> None:
    record_run(project)
    with served(project.root) as started:
        page = browser.new_page()
        page.goto(str(started["url"]))
        expect(page.locator("tr[data-role=coder]")).to_be_visible(timeout=WAIT)
        expect(page.locator("tr[data-role=coder] td[data-col=host]")).to_be_hidden()
        expect(page.locator("#hosts")).to_be_hidden()
        page.close()
