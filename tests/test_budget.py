"""Token budgets: settings, one budget-crossed event per budget and run, its notification,
and status showing them. Session files are written by hand, as claude writes them."""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

import pytest

from swarmforge import eventread, events, times
from swarmforge.agents.claude.tokens import claude_project_dir
from swarmforge.config import sessionrecord
from swarmforge.config.alertsettings import NotifySettings
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import parse_settings
from swarmforge.daemon.alerts.command import Alerts
from swarmforge.daemon.budget.check import check
from swarmforge.daemon.budget.limits import Limits
from swarmforge.daemon.budget.tracker import Tracker
from swarmforge.errors import CorruptFile
from swarmforge.layout import BUDGET_STATE
from swarmforge.swarm.status.summary import status
from tests.support import RECORDER, Project, recorded, retry_until
from tests.support import run_cli as sf


def _stamp(ago: float = 0.0) -> str:
    return times.stamp(time.time() - ago)


class Swarm:
    """A project with a session record whose roles are claude agents with their own config dirs."""

    def __init__(self, root: Path, roles: list[str], settings: str, state: str = "running") -> None:
        self.root = root
        self.claude = root.parent / "claude"
        self.roles = [
            RoleRecord(
                name=name,
                agent="claude",
                worktree="master" if n == 0 else name,
                path=str(root if n == 0 else root / ".worktrees" / name),
                branch="main",
                port=4000 + n,
                mode="task",
                env={"CLAUDE_CONFIG_DIR": str(self.claude)},
            )
            for n, name in enumerate(roles)
        ]
        for role in self.roles:
            Path(role.path).mkdir(parents=True, exist_ok=True)
        (root / ".swarmforge").mkdir(exist_ok=True)
        self.record = SessionRecord(
            run_id="r1",
            project=str(root),
            backend="headless",
            state=state,  # type: ignore[arg-type]
            started_at=_stamp(ago=60),
            roles=self.roles,
        )
        sessionrecord.save(str(root), self.record)
        (root / "swarmforge").mkdir(exist_ok=True)
        (root / "swarmforge" / "swarmforge.toml").write_text(settings)
        self.messages = 0

    def spend(self, role: str, tokens: int) -> None:
        """The role's claude answers once, with `tokens` input tokens."""
        found = self.record.role(role)
        assert found is not None
        directory = Path(claude_project_dir(str(self.claude), found.path))
        directory.mkdir(parents=True, exist_ok=True)
        self.messages += 1
        line = {
            "type": "assistant",
            "cwd": found.path,
            "timestamp": _stamp(),
            "message": {"id": f"msg_{self.messages}", "usage": {"input_tokens": tokens}},
        }
        with (directory / "session.jsonl").open("a") as f:
            f.write(json.dumps(line) + "\n")

    def crossings(self) -> list[dict[str, object]]:
        """The budget-crossed events in the project's log."""
        chunk = eventread.read(events.log_path(str(self.root)))
        return [e for e in chunk.events if e["kind"] == "budget-crossed"]

    def check(self) -> list[dict[str, object]]:
        said: list[str] = []
        crossed = check(str(self.root), said.append)
        assert said == []
        return crossed


def test_budgets_parse_and_a_bad_one_names_the_file_and_the_key() -> None:
    text = b"[budget]\ntokens = 5_000_000\n[roles.coder.budget]\ntokens = 20000\n"
    settings = parse_settings(text, "s.toml", ("coder", "qa"))
    assert settings.budget.tokens == 5_000_000
    assert settings.role("coder").budget.tokens == 20000
    assert settings.role("qa").budget.tokens is None
    assert Limits.of(settings) == Limits(5_000_000, {"coder": 20000})
    assert parse_settings(b"", "s.toml").budget.tokens is None
    assert "budget-crossed" in parse_settings(b"", "s.toml").notify.on
    for value in ("0", "-5", "1.5", '"lots"', '"5"', "true"):
        with pytest.raises(CorruptFile, match=r"^s\.toml: budget\.tokens: .*not a number of tok"):
            parse_settings(f"[budget]\ntokens = {value}\n".encode(), "s.toml")
    with pytest.raises(CorruptFile, match=r"^s\.toml: roles\.coder\.budget\.tokens: .*0 is not"):
        parse_settings(b"[roles.coder.budget]\ntokens = 0\n", "s.toml")
    with pytest.raises(CorruptFile, match=r"^s\.toml: roles\.coder\.budget\.limit: Extra"):
        parse_settings(b"[roles.coder.budget]\nlimit = 5\n", "s.toml")


def test_a_role_crossing_its_budget_is_reported_once_even_after_a_restart(
    tmp_path: Path,
) -> None:
    swarm = Swarm(tmp_path / "p", ["coder", "qa"], "[roles.coder.budget]\ntokens = 1000\n")
    swarm.spend("coder", 999)
    swarm.spend("qa", 5000)  # no budget of its own, and none for the swarm
    assert swarm.check() == [] and swarm.crossings() == []
    swarm.spend("coder", 1)
    expected = {"scope": "role", "role": "coder", "tokens": 1000, "budget": 1000, "run_id": "r1"}
    assert swarm.check() == [expected]
    swarm.spend("coder", 500)
    assert swarm.check() == []
    # A daemon started afresh reads what was reported from its file.
    state = json.loads((swarm.root / BUDGET_STATE).read_text())
    assert state == {"run": "r1", "reported": ["role:coder"]}
    assert swarm.check() == []
    (event,) = swarm.crossings()
    assert {k: v for k, v in event.items() if k != "ts"} == {"kind": "budget-crossed", **expected}
    # The next run has its budgets again.
    sessionrecord.save(str(swarm.root), swarm.record.model_copy(update={"run_id": "r2"}))
    assert [c["run_id"] for c in swarm.check()] == ["r2"]


def test_the_swarm_budget_counts_every_role_together(tmp_path: Path) -> None:
    settings = "[budget]\ntokens = 300\n[roles.qa.budget]\ntokens = 1000\n"
    swarm = Swarm(tmp_path / "p", ["coder", "qa"], settings)
    swarm.spend("coder", 200)
    swarm.spend("qa", 99)
    assert swarm.check() == []
    swarm.spend("qa", 1)
    assert swarm.check() == [{"scope": "swarm", "tokens": 300, "budget": 300, "run_id": "r1"}]
    swarm.spend("qa", 900)
    assert [c["scope"] for c in swarm.check()] == ["role"]
    assert swarm.check() == [] and len(swarm.crossings()) == 2


def test_nothing_is_checked_unless_the_run_is_running(tmp_path: Path) -> None:
    swarm = Swarm(tmp_path / "p", ["coder"], "[budget]\ntokens = 1\n", state="stopped")
    swarm.spend("coder", 10)
    assert swarm.check() == [] and not (swarm.root / BUDGET_STATE).exists()


class Kept(logging.Handler):
    """Keeps what is logged."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_check_that_fails_is_logged_once_and_never_raised(tmp_path: Path) -> None:
    swarm = Swarm(tmp_path / "p", ["coder"], "[budget]\ntokens = 0\n")
    swarm.spend("coder", 10)
    log = logging.getLogger("test-budget")
    handler = Kept()
    log.addHandler(handler)
    try:
        every_time = Tracker(str(swarm.root), log, every=0)
        for _ in range(3):
            every_time.poll()
            every_time.wait()
    finally:
        log.removeHandler(handler)
    (said,) = [r.getMessage() for r in handler.records]  # a lasting problem, logged once
    assert said.startswith("budget check: ") and "budget.tokens" in said
    assert swarm.crossings() == []


def test_the_daemons_check_runs_at_once_then_every_check_seconds(tmp_path: Path) -> None:
    swarm = Swarm(tmp_path / "p", ["coder"], "")
    swarm.spend("coder", 10)
    watch = Tracker(str(swarm.root), logging.getLogger("test-budget"))
    watch.poll()  # at once: no budget yet
    watch.wait()
    (swarm.root / "swarmforge" / "swarmforge.toml").write_text("[budget]\ntokens = 5\n")
    watch.poll()  # not due for CHECK_SECONDS
    watch.wait()
    assert swarm.crossings() == []
    soon = Tracker(str(swarm.root), logging.getLogger("test-budget"), every=0)
    soon.poll()
    soon.wait()
    assert [c["tokens"] for c in swarm.crossings()] == [10]


def test_a_budget_crossed_notifies_the_configured_command(tmp_path: Path) -> None:
    swarm = Swarm(tmp_path / "p", ["coder"], "[budget]\ntokens = 10\n")
    swarm.spend("coder", 10)
    swarm.check()
    out = tmp_path / "notes"
    problems: list[str] = []
    command = [sys.executable, "-c", RECORDER, str(out)]
    alerts = Alerts(command, NotifySettings().on, cwd=str(swarm.root), log=problems.append, burst=0)
    alerts.feed(eventread.read(events.log_path(str(swarm.root))).events)
    alerts.wait()
    (note,) = recorded(out)
    (event,) = swarm.crossings()
    assert note == {"trigger": "budget-crossed", **event} and problems == []
    assert note["scope"] == "swarm" and note["tokens"] == 10 and note["budget"] == 10


def test_the_daemon_reports_a_crossed_budget(project: Project) -> None:
    settings = "[roles.coder.budget]\ntokens = 50\n"
    swarm = Swarm(project.root, ["coder"], settings)
    swarm.spend("coder", 60)
    assert sf("daemon", "start", "--notify", "none", cwd=project.root).returncode == 0
    try:
        retry_until(lambda: len(swarm.crossings()) == 1)
    finally:
        assert sf("daemon", "stop", cwd=project.root).returncode == 0
    (event,) = swarm.crossings()
    assert event["role"] == "coder" and event["tokens"] == 60
    log = (project.root / ".swarmforge" / "daemon" / "handoffd.log").read_text()
    assert "budget" not in log, log


def test_status_shows_each_budget(project: Project) -> None:
    settings = "[budget]\ntokens = 90000\n[roles.coder.budget]\ntokens = 50000\n"
    swarm = Swarm(project.root, ["coder", "qa"], settings, state="stopped")
    swarm.spend("coder", 12345)
    shown = status(str(swarm.root)).as_json()
    assert shown["budget"] == 90000
    roles = {r["role"]: r for r in shown["roles"]}  # type: ignore[attr-defined]
    assert roles["coder"]["budget"] == 50000 and roles["coder"]["tokens"]["total"] == 12345
    assert roles["qa"]["budget"] is None
    r = sf("status", cwd=swarm.root)
    assert r.returncode == 0, r.stderr
    assert "    tokens 12,345 of 50,000: in 12,345, out 0," in r.stdout
