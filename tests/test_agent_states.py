"""Agent states: the combining rules on built evidence, and real claude and codex in tmux."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmforge import events
from swarmforge.errors import CorruptFile
from swarmforge.swarm import agenthint, agentstate, lifecycle, runrecord, state
from swarmforge.swarm.agenthint import Hint
from swarmforge.swarm.agentstate import Evidence, combine
from swarmforge.swarm.settings import parse_settings
from tests.realagents import require_cli
from tests.support import VENV_BIN, retry_until
from tests.support import run_cli as sf
from tests.test_real_agents import LiveSwarm
from tests.test_swarm import make_swarm, nothing_left

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
    ev = with_(RUNNING, hint=Hint("working", NOW - 5, "claude PreToolUse"), hooks=True)
    verdict = combine(with_(ev, prompt_on_screen=" Do you want to proceed?"), NOW, STALL)
    assert verdict.state == "waiting" and "Do you want to proceed?" in verdict.reason
    assert agentstate.prompt_line(["│ Bash command", "│ Do you want to proceed?", "│ 1. Yes"])


def test_claude_hooks_decide_between_working_waiting_and_idle() -> None:
    hooked = with_(RUNNING, hooks=True)
    assert judged(with_(hooked, hint=Hint("working", NOW - 1, "claude PreToolUse"))) == "working"
    assert judged(with_(hooked, hint=Hint("waiting", NOW - 1, "claude Notification"))) == "waiting"
    idle = with_(hooked, hint=Hint("idle", NOW - 1, "claude Stop"))
    assert judged(idle) == "idle"
    # Its screen redrawing after the Stop hook is no work; claiming an item after it is.
    assert judged(with_(idle, active_at=NOW)) == "idle"
    assert judged(with_(idle, busy_since=NOW - 0.5)) == "working"


def test_a_hint_from_before_the_last_start_is_ignored() -> None:
    stale = with_(RUNNING, hooks=True, hint=Hint("working", NOW - 500, "claude PreToolUse"))
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
    idle = with_(busy, hooks=True, hint=Hint("idle", NOW - 50, "claude Stop"), active_at=NOW)
    assert judged(idle, now=NOW + STALL) == "stalled"


def test_hook_inputs_map_to_hints(tmp_path: Path) -> None:
    claude = agenthint.from_claude
    assert claude({"hook_event_name": "PreToolUse"}) == ("working", "claude PreToolUse")
    assert claude({"hook_event_name": "Stop"}) == ("idle", "claude Stop")
    asked = {"hook_event_name": "Notification", "notification_type": "permission_prompt"}
    assert claude(asked) == ("waiting", "claude Notification")
    reminded = {"hook_event_name": "Notification", "message": "Claude is waiting for your input"}
    assert claude(reminded) == ("idle", "claude Notification")
    assert claude({"hook_event_name": "SessionEnd"}) is None
    assert agenthint.from_codex({"type": "agent-turn-complete"}) == ("idle", "codex notify")
    env = {"SWARMFORGE_PROJECT": str(tmp_path), "SWARMFORGE_ROLE": "coder"}
    assert agenthint.record(env, "codex", '{"type": "agent-turn-complete"}')
    hint = agenthint.read_hint(str(tmp_path), "coder")
    assert hint is not None and (hint.state, hint.source) == ("idle", "codex notify")
    assert not agenthint.record({}, "claude", '{"hook_event_name": "Stop"}')
    assert not agenthint.record(env, "claude", "not json")


def test_the_callback_never_fails_the_agent(tmp_path: Path) -> None:
    env = {"SWARMFORGE_PROJECT": str(tmp_path / "gone" / "deeper"), "SWARMFORGE_ROLE": "coder"}
    (tmp_path / "gone").write_text("a file where a directory should be")
    r = subprocess.run(
        [os.path.join(VENV_BIN, "swarmforge"), "agent-state", "--agent", "claude"],
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


# --- the real agents, offline against the scripted model -------------------------------

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def live(repo: Path, tmp_path: Path) -> Iterator[LiveSwarm]:
    require_cli("claude")
    require_cli("codex")
    swarm = LiveSwarm(repo, tmp_path / "homes")
    try:
        yield swarm
    finally:
        swarm.down()
    nothing_left(repo)


def agent_state(repo: Path, role: str) -> state.AgentState | None:
    record = runrecord.load(str(repo))
    assert record is not None
    found = record.role(role)
    assert found is not None
    return state.role_status(str(repo), record, found, 0.0).agent_state


def wait_state(
    repo: Path, role: str, wanted: str, because: str = "", timeout: float = 60
) -> state.AgentState:
    """Poll until `role`'s agent is in state `wanted` for a reason naming `because`."""
    seen: list[str] = []

    def reached() -> bool:
        shown = agent_state(repo, role)
        seen.append(f"{shown.state}: {shown.reason}" if shown else "none")
        return shown is not None and shown.state == wanted and because in shown.reason

    try:
        retry_until(reached, timeout=timeout)
    except AssertionError:
        raise AssertionError(f"{role} never {wanted}; last seen {seen[-3:]}") from None
    shown = agent_state(repo, role)
    assert shown is not None
    return shown


def recorded_states(repo: Path, role: str) -> list[str]:
    chunk = events.read(events.log_path(str(repo)))
    return [
        str(e["state"]) for e in chunk.events if e["kind"] == "agent-state" and e["role"] == role
    ]


CLAUDE_CODER = "window coder claude master --allowedTools Bash\n"


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
    # No --allowedTools: claude asks before it runs git commit.
    make_swarm(repo, "window coder claude master\n", prompts={"coder": "Code.\n"})
    live.first = ["git commit -q --allow-empty -m unapproved"]
    live.up()
    shown = wait_state(repo, "coder", "waiting")
    assert "Do you want" in shown.reason or "Notification" in shown.reason
    retry_until(lambda: "waiting" in recorded_states(repo, "coder"))


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


@pytest.mark.slow
@needs_tmux
def test_codex_is_idle_after_a_turn_by_its_notify_program(repo: Path, live: LiveSwarm) -> None:
    make_swarm(repo, "window cleaner codex cleaner\n", prompts={"cleaner": "Clean.\n"})
    live.up()
    live.wait_openings("cleaner", 1)
    shown = wait_state(repo, "cleaner", "idle")
    assert shown.reason == "codex notify says its turn ended"
