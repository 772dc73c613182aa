"""`swarmforge cockpit`: the real server on a real project, driven by Playwright with Debian's
chromium (installed by ./setup.sh), and by plain HTTP requests for the token and host checks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from swarmforge.views.cockpit.access import is_loopback
from swarmforge.views.cockpit.server import url
from tests.support import make_swarm
from tests.support import run_cli as sf
from tests.viewsupport import WAIT, get, served


def cell(page: Page, role: str, column: str) -> str:
    return page.inner_text(f"tr[data-role={role}] td[data-col={column}]")


@pytest.mark.slow
def test_the_page_shows_the_roles_and_a_handoff_arrives_without_a_reload(
    repo: Path, browser: Browser
) -> None:
    make_swarm(repo, "window worker exec worker task sh -c 'cat; echo working on it; sleep 30'\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        with served(repo) as started:
            assert started["token"] is None  # loopback: no token
            page = browser.new_page()
            page.goto(str(started["url"]))
            row = page.locator("tr[data-role=worker]")
            expect(row).to_be_visible(timeout=WAIT)
            expect(page.locator("#link")).to_have_text("live", timeout=WAIT)
            assert cell(page, "worker", "current") == "-"
            page.evaluate("window.stayed = true")  # gone if the page reloads

            sent = sf("send", "worker", "please work", cwd=repo)
            assert sent.returncode == 0, sent.stderr
            current = row.locator("td[data-col=current]")
            expect(current).to_contain_text("_to_worker.handoff", timeout=WAIT)
            expect(page.locator("#events")).to_contain_text("delivered", timeout=WAIT)
            assert page.evaluate("window.stayed") is True

            row.click()
            expect(page.locator("#detail-text")).to_contain_text("working on it", timeout=WAIT)
            page.click("button[data-show=handoff]")
            expect(page.locator("#detail-text")).to_contain_text("please work", timeout=WAIT)
            expect(page.locator("#attach")).to_have_text(
                f"swarmforge attach worker --project {repo}"
            )
            page.close()
    finally:
        assert sf("down", cwd=repo).returncode == 0


@pytest.mark.slow
def test_a_role_state_change_appears_on_the_open_page(repo: Path, browser: Browser) -> None:
    make_swarm(repo, "window worker exec worker task sh -c 'cat; sleep 30'\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        with served(repo) as started:
            page = browser.new_page()
            page.goto(str(started["url"]))
            state = page.locator("tr[data-role=worker] td[data-col=state]")
            expect(state).to_have_text(re.compile("starting|working|idle"), timeout=WAIT)
            page.evaluate("window.stayed = true")
            assert sf("down", cwd=repo).returncode == 0
            # The runner and its agent stop: the row says so without a reload.
            expect(state).to_have_text("stopped", timeout=WAIT)
            expect(page.locator("#summary")).to_contain_text("stopped", timeout=WAIT)
            assert page.evaluate("window.stayed") is True
            page.close()
    finally:
        sf("down", cwd=repo)


def test_planned_runs_show_each_task_its_edges_and_why_one_is_parked(
    repo: Path, browser: Browser
) -> None:
    spec = {
        "goal": "ship it",
        "tasks": [
            {"id": "build", "command": ["true"]},
            {"id": "test", "command": ["false"], "dependsOn": ["build"]},
            {
                "id": "deploy",
                "command": ["true"],
                "dependsOn": ["build"],
                "metadata": {"irreversible": True},
            },
        ],
    }
    (repo / "spec.json").write_text(json.dumps(spec))
    sf("run", "spec.json", cwd=repo)
    with served(repo) as started:
        page = browser.new_page()
        page.goto(str(started["url"]))
        run = page.locator(".run")
        expect(run).to_contain_text("ship it", timeout=WAIT)
        expect(run.locator("[data-task=build]")).to_contain_text("build: done")
        expect(run.locator("[data-task=test]")).to_contain_text("test: failed")
        expect(run.locator("[data-task=test]")).to_contain_text("after build")
        deploy = run.locator("[data-task=deploy]")
        expect(deploy).to_contain_text("deploy: parked")
        expect(deploy).to_contain_text("parked (irreversible): swarmforge approve")
        # The DAG by depth: build alone in the first column, what waits on it in the next.
        assert page.locator(".level").first.inner_text().strip() == "build: done"
        page.close()


def test_beyond_loopback_a_request_without_the_token_is_refused(
    repo: Path, browser: Browser
) -> None:
    with served(repo, "--host", "0.0.0.0") as started:
        token, port = started["token"], started["port"]
        assert isinstance(token, str) and len(token) >= 24
        assert started["url"] == f"http://0.0.0.0:{port}/?token={token}"
        base = f"http://127.0.0.1:{port}"
        wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # never the token itself
        for path in ("/", "/stream", "/roles/x/diff", f"/?token={wrong}"):
            status, body = get(base + path)
            assert status == 401, path
            assert "token is required" in body
        assert get(f"{base}/", {"Authorization": f"Bearer {token}"})[0] == 200
        page = browser.new_page()
        page.goto(f"{base}/?token={token}")
        expect(page.locator("#link")).to_have_text("live", timeout=WAIT)
        expect(page.locator("#summary")).to_contain_text("No swarm is running", timeout=WAIT)
        page.close()


def test_on_loopback_a_request_naming_another_host_is_refused(repo: Path) -> None:
    with served(repo) as started:
        port = started["port"]
        assert get(f"http://127.0.0.1:{port}/")[0] == 200
        # A page elsewhere reaching the cockpit through a DNS name it controls.
        assert get(f"http://127.0.0.1:{port}/", {"Host": f"evil.example:{port}"})[0] == 400


def test_on_ipv6_loopback_the_cockpit_answers_and_still_refuses_other_hosts(repo: Path) -> None:
    with served(repo, "--host", "::1") as started:
        port = started["port"]
        assert started["url"] == f"http://[::1]:{port}/" and started["token"] is None
        status, body = get(f"http://[::1]:{port}/")
        assert status == 200, body
        assert get(f"http://[::1]:{port}/", {"Host": f"evil.example:{port}"})[0] == 400
        assert get(f"http://[::1]:{port}/", {"Host": f"[::2]:{port}"})[0] == 400


def test_a_port_in_use_is_one_clear_error(repo: Path) -> None:
    with served(repo) as started:
        taken = sf("cockpit", "--port", str(started["port"]), cwd=repo, timeout=30)
    assert taken.returncode != 0
    assert f"cannot listen on 127.0.0.1:{started['port']}" in taken.stderr
    assert "Traceback" not in taken.stderr


def test_what_is_loopback() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost")
    assert is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
    assert url("::1", 80, None) == "http://[::1]:80/"
