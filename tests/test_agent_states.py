"""Agent states: the combining rules on built evidence, and real claude and codex in tmux."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from swarmforge import eventread, events
from swarmforge.agents import conversation, evidence, hints, lifecycle, staterecord
from swarmforge.agents.agent import Launch
from swarmforge.agents.claude.hooks import from_claude
from swarmforge.agents.codex import hooks as codexhooks
from swarmforge.agents.codex.agent import Codex
from swarmforge.agents.codex.hooks import from_codex
from swarmforge.agents.hints import Hint
from swarmforge.agents.registry import agent
from swarmforge.agents.reports import last_report
from swarmforge.agents.screen import prompt_line, working_line
from swarmforge.agents.state import Evidence, Verdict, combine, said
from swarmforge.config import sessionrecord
from swarmforge.config.conf import parse_config
from swarmforge.config.settings import parse_settings
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.wake import WAKE_LINE
from swarmforge.errors import CorruptFile
from swarmforge.swarm.session.down import down as swarm_down
from swarmforge.swarm.session.up import up as swarm_up
from swarmforge.tempdirs import temp_dir
from swarmforge.tmux.server import project_socket
from tests.realagents import (
    LiveSwarm,
    agent_state,
    agents_path,
    needs_tmux,
    require_cli,
    screen_of,
    tool_results,
    wait_state,
)
from tests.support import SWARMFORGE, git, make_swarm, nothing_left, retry_until
from tests.support import run_cli as sf

NOW = 10_000.0
STALL = 900.0
RUNNING = Evidence(life="running", alive=True, started_at=NOW - 100)


def judged(ev: Evidence, now: float = NOW) -> str:
    return combine(ev, now, STALL).state


def with_(ev: Evidence, **changes: object) -> Evidence:
    return Evidence(**{**ev.__dict__, **changes})  # type: ignore[arg-type]


def test_no_recorded_start_is_starting_and_an_exit_is_exited_with_its_code() -> None:
    assert judged(Evidence(life="none", alive=False)) == "starting"
    ended = combine(Evidence(life="exited", alive=False, exit_code=137), NOW, STALL)
    assert (ended.state, ended.exit_code) == ("exited", 137)
    # A process gone without a recorded exit (the supervisor itself was killed) is exited too.
    assert judged(with_(RUNNING, alive=False)) == "exited"


def test_an_approval_prompt_on_the_screen_is_waiting_whatever_the_hooks_said() -> None:
    ev = with_(RUNNING, hint=Hint("working", NOW - 5, "claude PreToolUse"))
    verdict = combine(with_(ev, prompt_on_screen=" Do you want to proceed?"), NOW, STALL)
    assert verdict.state == "waiting" and "Do you want to proceed?" in verdict.reason
    assert prompt_line(["│ Bash command", "│ Do you want to proceed?", "│ 1. Yes"])


def test_claude_hooks_decide_between_working_waiting_and_idle() -> None:
    assert judged(with_(RUNNING, hint=Hint("working", NOW - 1, "claude PreToolUse"))) == "working"
    assert judged(with_(RUNNING, hint=Hint("waiting", NOW - 1, "claude Notification"))) == "waiting"
    idle = with_(RUNNING, hint=Hint("idle", NOW - 1, "claude Stop"))
    assert judged(idle) == "idle"
    # Its screen redrawing after the Stop hook is no work; claiming an item after it is.
    assert judged(with_(idle, active_at=NOW)) == "idle"
    assert judged(with_(idle, busy_since=NOW - 0.5)) == "working"


def test_a_hint_from_before_the_last_start_is_ignored() -> None:
    stale = with_(RUNNING, hint=Hint("working", NOW - 500, "claude PreToolUse"))
    assert judged(stale) == "idle"


def test_without_hooks_activity_is_working_and_quiet_is_idle() -> None:
    assert judged(with_(RUNNING, active_at=NOW - 2)) == "working"
    assert judged(with_(RUNNING, active_at=NOW - 60)) == "idle"
    turn_over = with_(RUNNING, hint=Hint("idle", NOW - 30, "codex notify"))
    assert judged(turn_over) == "idle"
    # codex says only when a turn ends: activity after that is its next turn.
    assert judged(with_(turn_over, active_at=NOW - 1)) == "working"


def test_an_item_in_process_with_nothing_moving_past_the_threshold_is_stalled() -> None:
    busy = with_(RUNNING, busy_since=NOW - 200, active_at=NOW - 100)
    assert judged(busy) == "working"
    assert judged(busy, now=NOW + STALL) == "stalled"
    # Nothing in hand: quiet is idle, however long.
    assert judged(with_(RUNNING, active_at=NOW - 5000)) == "idle"
    # Once claude's turn ended, its screen's redraws do not keep a stall away.
    idle = with_(busy, hint=Hint("idle", NOW - 50, "claude Stop"), active_at=NOW)
    assert judged(idle, now=NOW + STALL) == "stalled"


def test_hook_inputs_map_to_hints(tmp_path: Path) -> None:
    claude = from_claude
    assert claude({"hook_event_name": "PreToolUse"}) == ("working", "claude PreToolUse")
    assert claude({"hook_event_name": "Stop"}) == ("idle", "claude Stop")
    asked = {"hook_event_name": "Notification", "notification_type": "permission_prompt"}
    assert claude(asked) == ("waiting", "claude Notification")
    reminded = {"hook_event_name": "Notification", "message": "Claude is waiting for your input"}
    assert claude(reminded) == ("idle", "claude Notification")
    assert claude({"hook_event_name": "SessionEnd"}) is None
    assert from_codex({"type": "agent-turn-complete"}) == ("idle", "codex notify")
    env = {"SWARMFORGE_PROJECT": str(tmp_path), "SWARMFORGE_ROLE": "coder"}
    assert hints.record(env, agent("codex"), '{"type": "agent-turn-complete"}')
    hint = hints.read_hint(str(tmp_path), "coder")
    assert hint is not None and (hint.state, hint.source) == ("idle", "codex notify")
    assert not hints.record({}, agent("claude"), '{"hook_event_name": "Stop"}')
    assert not hints.record(env, agent("claude"), "not json")


def test_the_callback_never_fails_the_agent(tmp_path: Path) -> None:
    env = {"SWARMFORGE_PROJECT": str(tmp_path / "gone" / "deeper"), "SWARMFORGE_ROLE": "coder"}
    (tmp_path / "gone").write_text("a file where a directory should be")
    r = subprocess.run(
        [SWARMFORGE, "agent-state", "--agent", "claude"],
        input=b'{"hook_event_name": "Stop"}',
        env={**env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout == b""


def test_the_stall_threshold_is_a_duration_and_a_bad_one_names_file_and_value() -> None:
    assert parse_settings(b"", "s.toml").stall.seconds == 900
    assert parse_settings(b'[stall]\nafter = "1h30m"\n', "s.toml").stall.seconds == 5400
    with pytest.raises(CorruptFile, match=r"s\.toml: stall\.after: .*'soon' is not a duration"):
        parse_settings(b'[stall]\nafter = "soon"\n', "s.toml")


def test_codex_hook_inputs_map_to_hints_and_its_notify_yields_to_them(tmp_path: Path) -> None:
    codex = from_codex
    for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse"):
        assert codex({"hook_event_name": event, "tool_name": "Bash"}) == (
            "working",
            f"codex {event}",
        )
    asked = {"hook_event_name": "PermissionRequest", "tool_name": "Bash"}
    assert codex(asked) == ("waiting", "codex PermissionRequest")
    assert codex({"hook_event_name": "Stop", "stop_hook_active": False}) == ("idle", "codex Stop")
    assert codex({"hook_event_name": "SessionStart"}) is None
    assert codex({"type": "approval-requested"}) is None  # not a payload of its notify
    env = {"SWARMFORGE_PROJECT": str(tmp_path), "SWARMFORGE_ROLE": "cleaner"}
    turn_over = '{"type": "agent-turn-complete", "thread-id": "t"}'
    # Without hooks, notify is codex's only word; once a hook spoke, notify is not heard:
    # it also fires when codex's session-title side thread ends, mid-turn.
    assert hints.record(env, agent("codex"), turn_over)
    assert hints.record(env, agent("codex"), '{"hook_event_name": "PreToolUse"}')
    assert not hints.record(env, agent("codex"), turn_over)
    hint = hints.read_hint(str(tmp_path), "cleaner")
    assert hint is not None and (hint.state, hint.source) == ("working", "codex PreToolUse")
    assert hint.both_sides and not Hint("idle", NOW, "codex notify").both_sides


def test_codex_state_hooks_are_one_trusted_config_option() -> None:
    flag, value = codexhooks.state_hook_args()
    hooks = tomllib.loads(value)["hooks"]
    assert flag == "-c" and set(hooks) == {*codexhooks.STATE_HOOKS, "state"}
    handler = hooks["PreToolUse"][0]["hooks"][0]
    assert handler["command"] == "swarmforge agent-state --agent codex"
    # codex trusts a hook whose hash is recorded under its key: the hash that codex 0.171.0
    # gives this hook, as its app-server's hooks/list reports it.
    key = "/<session-flags>/config.toml:pre_tool_use:0:0"
    assert hooks["state"][key]["trusted_hash"] == (
        "sha256:30c13d5cd9b16c60d724506be0757dcf6f4fd51fdbde0220598452b2867e04d9"
    )
    labels = ("user_prompt_submit", "pre_tool_use", "permission_request", "post_tool_use", "stop")
    assert set(hooks["state"]) == {f"/<session-flags>/config.toml:{label}:0:0" for label in labels}
    # One line of TOML, whatever the command holds.
    odd = {"type": "command", "command": 'say "hi" \\ there', "timeout": 1, "async": False}
    assert tomllib.loads(f"x = {codexhooks.inline_toml({'h': [odd]})}")["x"] == {"h": [odd]}


REPORTS = (
    b"\x1b]0;title\x07\x1b]7501;state=idle:app=codex\x1b\\drawn"
    b"\x1b]7501;state=working:app=codex\x1b\\more"
    b"\x1b]7501;state=blocked:app=codex:kind=permission\x1b\\dialog"
)


def test_status_reports_on_the_terminal_map_to_states() -> None:
    found = last_report(REPORTS, 1000)
    assert found is not None
    assert (found.state, found.source) == ("waiting", "codex terminal status")
    assert found.offset == 1000 + REPORTS.index(b"\x1b]7501;state=blocked")
    done = last_report(REPORTS + b"\x1b]7501;state=done:app=codex\x07", 0)
    assert done is not None and done.state == "idle"
    # `clear`, a report still being written, or an unknown word say nothing new.
    for tail in (b"\x1b]7501;state=clear\x1b\\", b"\x1b]7501;state=id", b"\x1b]7501;state=x\x07"):
        later = last_report(REPORTS + tail, 0)
        assert later is not None and later.state == "waiting"
    assert last_report(b"no reports here", 0) is None


def test_codex_hooks_outrank_its_terminal_status_which_outranks_its_notify() -> None:
    report = Hint("working", NOW - 5, "codex terminal status")
    notify = Hint("idle", NOW - 1, "codex notify")
    assert said(with_(RUNNING, hint=notify, report=report)) == report
    hook = Hint("working", NOW - 20, "codex PreToolUse")
    assert said(with_(RUNNING, hint=hook, report=report)) == hook
    assert said(with_(RUNNING, hint=notify)) == notify
    # A report from before the agent's last start is not its word.
    old = Hint("idle", NOW - 500, "codex terminal status")
    assert said(with_(RUNNING, hint=notify, report=old)) == notify
    waiting = combine(
        with_(RUNNING, report=Hint("waiting", NOW - 1, "codex terminal status")), NOW, STALL
    )
    assert waiting == Verdict("waiting", "codex terminal status says it waits for a person")
    # Its terminal status tells both sides of a turn: redraws after its end are no work.
    idle = with_(RUNNING, report=Hint("idle", NOW - 30, "codex terminal status"), active_at=NOW)
    assert combine(idle, NOW, STALL).reason == "codex terminal status says its turn ended"


def test_codex_screen_status_line_with_activity_is_working_without_its_own_word() -> None:
    screen = [
        "> Go.",
        "",
        "• Working (4s • esc to interrupt) · 1 background terminal running",
        "",
        "",
    ]
    assert working_line(screen, Codex.working_markers) is not None
    assert working_line(["> Ask Codex to do anything", ""], Codex.working_markers) is None
    active = with_(RUNNING, active_at=NOW - 1)
    shown = combine(with_(active, working_on_screen=True), NOW, STALL)
    assert shown.reason == "its screen shows it works and its processes or log are active"
    # Activity alone, where the screen would show a turn, is no work (a redraw, typing).
    quiet = combine(with_(active, working_on_screen=False), NOW, STALL)
    assert quiet == Verdict("idle", "its screen shows no turn in progress")
    # The status line of a frozen screen, without activity, is no work either.
    assert judged(with_(RUNNING, active_at=NOW - 60, working_on_screen=True)) == "idle"


def test_a_dialog_drawn_high_on_a_tall_pane_is_found() -> None:
    dialog = ["  Would you like to run the following command?", "  $ rm -rf scratch"]
    screen = [*dialog, "  Press enter to confirm or esc to cancel", *[""] * 40]
    assert prompt_line(screen) == "  Press enter to confirm or esc to cancel"


def test_a_report_behind_the_window_read_stands_until_a_new_one(tmp_path: Path) -> None:
    logs = tmp_path / ".swarmforge" / "logs"
    logs.mkdir(parents=True)
    log = logs / "cleaner.log"
    log.write_bytes(REPORTS)
    first = evidence.log_report(str(tmp_path), "cleaner", None, len(REPORTS), NOW)
    assert first is not None and (first.state, first.at) == ("waiting", NOW)
    before = staterecord.StateRecord(
        role="cleaner", run_id="r", state="waiting", since="s", report=first
    )
    # Seen again later: known since it was first seen.
    again = evidence.log_report(str(tmp_path), "cleaner", before, len(REPORTS), NOW + 2)
    assert again == first
    # Pushed out of the window by a long turn's redraws: it still stands.
    log.write_bytes(REPORTS + b"x" * evidence.REPORT_WINDOW)
    size = log.stat().st_size
    assert evidence.log_report(str(tmp_path), "cleaner", before, size, NOW + 4) == first
    # A new report replaces it, from the moment it is seen.
    log.write_bytes(log.read_bytes() + b"\x1b]7501;state=working:app=codex\x1b\\")
    size = log.stat().st_size
    newer = evidence.log_report(str(tmp_path), "cleaner", before, size, NOW + 6)
    assert newer is not None and (newer.state, newer.at) == ("working", NOW + 6)


# --- the real agents, offline against the scripted model -------------------------------


def recorded_states(repo: Path, role: str) -> list[str]:
    chunk = eventread.read(events.log_path(str(repo)))
    return [
        str(e["state"]) for e in chunk.events if e["kind"] == "agent-state" and e["role"] == role
    ]


CLAUDE_CODER = "window coder claude master --allowedTools Bash\n"
# Outside its sandbox, claude asks before it runs git commit ("1. Yes" selected).
UNBOXED = {"swarmforge/swarmforge.toml": "[roles.coder]\nsandbox = false\n"}


@pytest.mark.slow
@needs_tmux
def test_claude_works_while_its_tool_call_runs_then_is_idle(repo: Path, live: LiveSwarm) -> None:
    make_swarm(repo, CLAUDE_CODER, prompts={"coder": "Code.\n"})
    live.first = ["sleep 20"]
    live.up()
    # Working by its hooks, not only by its screen's activity: PreToolUse of `sleep`.
    wait_state(repo, "coder", "working", because="claude")
    shown = wait_state(repo, "coder", "idle")
    assert shown.reason == "claude Stop says its turn ended"
    # The supervisor recorded each change with its time, without anyone asking.
    retry_until(lambda: recorded_states(repo, "coder")[-1:] == ["idle"])
    assert "working" in recorded_states(repo, "coder")
    text = sf("status", cwd=repo).stdout
    assert "agent idle since " in text
    shown_json = json.loads(sf("status", "--json", cwd=repo).stdout)["roles"][0]["agent_state"]
    assert shown_json["state"] == "idle" and shown_json["since"]


@pytest.mark.slow
@needs_tmux
def test_claude_at_an_approval_prompt_is_waiting(repo: Path, live: LiveSwarm) -> None:
    make_swarm(repo, "window coder claude master\n", files=UNBOXED, prompts={"coder": "Code.\n"})
    live.first = ["git commit -q --allow-empty -m unapproved"]
    live.up()
    shown = wait_state(repo, "coder", "waiting")
    assert "Do you want" in shown.reason or "Notification" in shown.reason
    retry_until(lambda: "waiting" in recorded_states(repo, "coder"))


def woken(live: LiveSwarm, role: str) -> list[str]:
    """The wake-ups `role`'s agent took: typed into it (a new turn), or from its inbox
    (a new turn, or beside a tool's result)."""
    return [
        e.user_text for e in live.server.exchanges(role) if not e.side and WAKE_LINE in e.user_text
    ]


@pytest.mark.slow
@needs_tmux
def test_an_idle_claude_is_woken_through_its_inbox_every_time(repo: Path, live: LiveSwarm) -> None:
    make_swarm(repo, "window coder claude coder\n", prompts={"coder": "Code.\n"})
    live.up()
    wait_state(repo, "coder", "idle")
    # claude may bind its inbox a moment after it starts (until then a wake-up is typed).
    inbox = Path(temp_dir(str(repo), "coder"), "inbox.sock")
    retry_until(inbox.exists, timeout=30)
    daemon_log = Path(Paths(str(repo)).log)
    for n in (1, 2):  # the same line twice: claude would drop a text it has taken
        sent = sf("send", "coder", f"Mail {n}.", cwd=repo)
        assert sent.returncode == 0, sent.stderr
        retry_until(lambda n=n: len(woken(live, "coder")) == n, timeout=30)
        wait_state(repo, "coder", "idle")
    assert daemon_log.read_text().count("woke coder through its agent's inbox") == 2


@pytest.mark.slow
@needs_tmux
def test_a_handoff_to_claude_at_an_approval_dialog_approves_nothing_and_wakes_it_after(
    repo: Path, live: LiveSwarm
) -> None:
    make_swarm(repo, "window coder claude master\n", files=UNBOXED, prompts={"coder": "Code.\n"})
    live.first = ["git -c user.name=c -c user.email=c@example.com commit -q --allow-empty -m asked"]
    live.up()
    wait_state(repo, "coder", "waiting")
    assert "Do you want" in screen_of(repo, "coder")
    retry_until(Path(temp_dir(str(repo), "coder"), "inbox.sock").exists, timeout=30)
    sent = sf("send", "coder", "Mail while a person is asked.", cwd=repo)
    assert sent.returncode == 0, sent.stderr
    daemon_log = Path(Paths(str(repo)).log)
    try:
        # Not typed: handed to claude's own inbox, which keeps it until the dialog is done.
        retry_until(lambda: "woke coder through its agent's inbox" in daemon_log.read_text())
    except AssertionError:
        raise AssertionError(f"{agent_state(repo, 'coder')}\n{daemon_log.read_text()}") from None
    # Held: ten seconds on, nothing was approved and the question still waits for a person.
    time.sleep(10)
    assert tool_results(live, "coder") == []
    assert "asked" not in git(repo, "log", "--format=%s", "-3")
    assert "Do you want" in screen_of(repo, "coder")
    shown = agent_state(repo, "coder")
    assert shown is not None and shown.state == "waiting"
    assert woken(live, "coder") == []
    # A person answers; the command runs, the turn ends, and the held wake-up is typed.
    press(repo, "coder", "Enter")
    try:
        retry_until(lambda: "asked" in git(repo, "log", "--format=%s", "-3"), timeout=30)
        retry_until(lambda: len(woken(live, "coder")) == 1, timeout=30)
    except AssertionError:
        turns = [
            (e.new_turn, e.user_text[-80:], (e.tool_output or "")[-300:])
            for e in live.server.exchanges("coder")
        ]
        raise AssertionError(
            f"{agent_state(repo, 'coder')}\n{daemon_log.read_text()}\n{turns}\n"
            f"{screen_of(repo, 'coder')}"
        ) from None


@pytest.mark.slow
@needs_tmux
def test_codex_at_its_login_menu_is_waiting_and_no_wake_up_chooses_for_it(
    repo: Path, tmp_path: Path
) -> None:
    require_cli("codex")
    make_swarm(repo, "window cleaner codex cleaner\n", prompts={"cleaner": "Clean.\n"})
    home = tmp_path / "home"  # never signed in
    (home / ".codex").mkdir(parents=True)
    path = agents_path() + os.environ.get("PATH", "/usr/bin:/bin")
    env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "PATH": path}
    swarm_up(str(repo), "tmux", stagger=0, role_env={"cleaner": env})
    try:
        wait_state(repo, "cleaner", "waiting", because="Sign in with ChatGPT")
        sent = sf("send", "cleaner", "Mail for an agent nobody signed in.", cwd=repo)
        assert sent.returncode == 0, sent.stderr
        daemon_log = Path(Paths(str(repo)).log)
        retry_until(lambda: "holding the wake-up of cleaner" in daemon_log.read_text())
        time.sleep(3)
        # Nothing was chosen: the menu still waits for a person.
        assert "Sign in with ChatGPT" in screen_of(repo, "cleaner")
        assert "new handoff mail" not in screen_of(repo, "cleaner")
    finally:
        swarm_down(str(repo))
    nothing_left(repo)


@pytest.mark.slow
@needs_tmux
def test_a_crashed_claude_is_exited_with_its_code(repo: Path, live: LiveSwarm) -> None:
    make_swarm(
        repo,
        CLAUDE_CODER,
        files={"swarmforge/swarmforge.toml": '[roles.coder]\nrestart = "never"\n'},
        prompts={"coder": "Code.\n"},
    )
    record = live.up()
    wait_state(repo, "coder", "idle")
    life = lifecycle.load(str(repo), "coder", record.run_id)
    assert life is not None and life.pid
    os.kill(life.pid, signal.SIGKILL)
    # Seen gone at once; its exit code follows when the supervisor has recorded it.
    wait_state(repo, "coder", "exited")
    retry_until(
        lambda: getattr(agent_state(repo, "coder"), "exit_code", None) == 128 + signal.SIGKILL
    )
    retry_until(lambda: recorded_states(repo, "coder")[-1:] == ["exited"])


@pytest.mark.slow
@needs_tmux
def test_claude_holding_an_item_without_moving_is_stalled(repo: Path, live: LiveSwarm) -> None:
    make_swarm(
        repo,
        CLAUDE_CODER,
        files={"swarmforge/swarmforge.toml": '[stall]\nafter = "3s"\n'},
        prompts={"coder": "Code.\n"},
    )
    # The opening turn claims the item that `send` queues, then the turn ends.
    live.first = ["while ready_for_next.sh | grep -q NO_TASK; do sleep 1; done"]
    live.up()
    r = sf("send", "coder", "Please do the thing.", cwd=repo)
    assert r.returncode == 0, r.stderr
    shown = wait_state(repo, "coder", "stalled")
    assert "an item is in process" in shown.reason
    retry_until(lambda: "stalled" in recorded_states(repo, "coder"))


CODEX = "window cleaner codex cleaner\n"  # as the swarm starts codex: `notify` and its hooks
# codex with its hooks turned off, as a user's configuration may: its terminal status is left.
CODEX_UNHOOKED = "window cleaner codex cleaner --disable hooks\n"
# codex asks before it runs a command that a rule of its exec policy marks `prompt`.
CODEX_ASKS = 'prefix_rule(pattern=["rm", "-rf", "scratch"], decision="prompt")\n'


def reported(repo: Path, role: str) -> tuple[str, str] | None:
    """The state and source of the last status report recorded of `role`'s terminal."""
    record = sessionrecord.load(str(repo))
    assert record is not None
    found = staterecord.load_record(str(repo), role, record.run_id)
    report = found.report if found is not None else None
    return (report.state, report.source) if report is not None else None


def press(repo: Path, role: str, key: str) -> None:
    """Type `key` into `role`'s tmux pane, as a person would."""
    record = sessionrecord.load(str(repo))
    found = record.role(role) if record is not None else None
    assert found is not None
    socket = project_socket(str(repo))
    subprocess.run(
        ["tmux", "-L", socket, "send-keys", "-t", f"={found.session_name}:", key], check=True
    )


@pytest.mark.slow
@needs_tmux
def test_codex_without_hooks_works_while_its_tool_call_runs_by_its_terminal_status(
    repo: Path, live: LiveSwarm
) -> None:
    make_swarm(repo, CODEX_UNHOOKED, prompts={"cleaner": "Clean.\n"})
    live.first = ["sleep 8"]
    live.up()
    shown = wait_state(repo, "cleaner", "working", because="terminal status")
    assert shown.reason == "codex terminal status says it works"
    assert tool_results(live, "cleaner") == []  # seen while `sleep` ran, not after
    shown = wait_state(repo, "cleaner", "idle", because="terminal status")
    assert shown.reason == "codex terminal status says its turn ended"
    assert len(tool_results(live, "cleaner")) == 1
    # Its notify program said so too; it is heard only when codex says nothing else.
    hint = hints.read_hint(str(repo), "cleaner")
    assert hint is not None and (hint.state, hint.source) == ("idle", "codex notify")
    retry_until(lambda: recorded_states(repo, "cleaner")[-2:] == ["working", "idle"])


@pytest.mark.slow
@needs_tmux
def test_codex_works_by_its_hooks_while_its_tool_call_runs(repo: Path, live: LiveSwarm) -> None:
    make_swarm(repo, CODEX, prompts={"cleaner": "Clean.\n"})
    live.first = ["sleep 8"]
    live.up()
    shown = wait_state(repo, "cleaner", "working", because="PreToolUse")
    assert shown.reason == "codex PreToolUse says it works"
    assert tool_results(live, "cleaner") == []
    shown = wait_state(repo, "cleaner", "idle", because="Stop")
    assert shown.reason == "codex Stop says its turn ended"
    assert len(tool_results(live, "cleaner")) == 1
    # Its notify program (which also fires for codex's side threads) was not heard.
    hint = hints.read_hint(str(repo), "cleaner")
    assert hint is not None and hint.source == "codex Stop"


@pytest.mark.slow
@needs_tmux
@pytest.mark.parametrize("hooked", [True, False], ids=["as-started", "without-hooks"])
def test_codex_at_its_approval_dialog_is_waiting(
    repo: Path, live: LiveSwarm, tmp_path: Path, hooked: bool
) -> None:
    rules = tmp_path / "homes" / "cleaner" / ".codex" / "rules"
    rules.mkdir(parents=True)
    (rules / "swarm.rules").write_text(CODEX_ASKS)
    # The swarm runs codex without approval prompts; this role asks for them itself.
    conf = (CODEX if hooked else CODEX_UNHOOKED).rstrip("\n") + " --ask-for-approval on-request\n"
    make_swarm(repo, conf, prompts={"cleaner": "Clean.\n"})
    live.first = ["rm -rf scratch"]
    live.up()
    shown = wait_state(repo, "cleaner", "waiting", because="screen")
    assert shown.reason == "its screen shows: Press enter to confirm or esc to cancel"
    assert tool_results(live, "cleaner") == []
    retry_until(lambda: "waiting" in recorded_states(repo, "cleaner"))
    # codex said so itself: by its PermissionRequest hook, or its terminal status.
    if hooked:
        hint = hints.read_hint(str(repo), "cleaner")
        word = (hint.state, hint.source) if hint is not None else None
        assert word == ("waiting", "codex PermissionRequest")
    else:
        retry_until(lambda: reported(repo, "cleaner") == ("waiting", "codex terminal status"))
    # Approved, the command runs and the turn ends.
    press(repo, "cleaner", "y")
    shown = wait_state(repo, "cleaner", "idle", because="Stop" if hooked else "terminal status")
    assert len(tool_results(live, "cleaner")) == 1


def test_a_hook_naming_its_session_records_the_conversation_up_resumes(tmp_path: Path) -> None:
    env = {"SWARMFORGE_PROJECT": str(tmp_path), "SWARMFORGE_ROLE": "coder"}
    stop = '{"hook_event_name": "Stop", "session_id": "0f6d-41"}'
    assert hints.record(env, agent("claude"), stop)
    assert conversation.read(str(tmp_path), "coder") is None  # no run named: not recorded
    hints.record({**env, "SWARMFORGE_RUN_ID": "r1"}, agent("claude"), stop)
    assert conversation.to_resume(str(tmp_path), "coder", "claude", "r1") == "0f6d-41"
    assert conversation.to_resume(str(tmp_path), "coder", "claude", "r2") is None  # a new run
    assert conversation.to_resume(str(tmp_path), "coder", "codex", "r1") is None  # a new agent
    forged = '{"hook_event_name": "Stop", "session_id": "x\\u001b]2;t\\u0007"}'
    hints.record({**env, "SWARMFORGE_RUN_ID": "r1"}, agent("claude"), forged)
    assert conversation.to_resume(str(tmp_path), "coder", "claude", "r1") == "0f6d-41"
    conversation.forget(str(tmp_path))
    assert conversation.read(str(tmp_path), "coder") is None


def test_a_resumed_agent_carries_on_its_own_session_told_that_the_swarm_started_again(
    tmp_path: Path,
) -> None:
    spec = parse_config("window coder claude coder\nwindow qa codex qa\n", "conf").roles
    launch = Launch(str(tmp_path), "/p/prompt.md", "Read swarmforge/constitution.prompt")
    claude = agent("claude").resume_argv(spec[0], launch, "0f6d-41") or []
    assert claude[:3] == ["claude", "--resume", "0f6d-41"]
    assert claude[-2:] == ["--", conversation.RESUMED]
    codex = agent("codex").resume_argv(spec[1], replace(launch, sandbox=False), "0f6d-41") or []
    assert codex[:2] == ["codex", "resume"] and codex[-3:] == [
        "--",
        "0f6d-41",
        conversation.RESUMED,
    ]
    # Only a session still on disk is resumed.
    home = {"HOME": str(tmp_path)}
    assert not agent("claude").keeps(home, "0f6d-41")
    (tmp_path / ".claude/projects/-w").mkdir(parents=True)
    (tmp_path / ".claude/projects/-w/0f6d-41.jsonl").write_text("{}\n")
    assert agent("claude").keeps(home, "0f6d-41")
    rollouts = tmp_path / ".codex/sessions/2026/12/04"
    rollouts.mkdir(parents=True)
    (rollouts / "rollout-2026-12-04T10-00-00-0f6d-41.jsonl").write_text("{}\n")
    assert agent("codex").keeps(home, "0f6d-41") and not agent("codex").keeps(home, "0f6d")
