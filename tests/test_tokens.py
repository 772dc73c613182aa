"""Tokens summed from the session files the real claude and codex write, against the scripted
model's usage figures."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from swarmforge.rehearse.model import Exchange, ModelServer, Reply
from swarmforge.rehearse.rehearsal import agent_env
from swarmforge.rehearse.wire import TOKENS_IN, TOKENS_OUT
from swarmforge.swarm.tokens import Tokens, claude_project_dir, role_tokens
from tests.realagents import VENV_BIN, require_cli

ARGV = {
    "claude": ["claude", "-p"],
    "codex": ["codex", "exec", "--skip-git-repo-check"],
}


def _answer(exchange: Exchange) -> Reply:
    return Reply(text="done")


def _run(agent: str, env: dict[str, str], cwd: Path, prompt: str) -> None:
    r = subprocess.run(
        [*ARGV[agent], prompt], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_real_agents_tokens_are_its_model_calls_usage(agent: str, tmp_path: Path) -> None:
    require_cli(agent)
    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    for directory in (project, elsewhere):
        directory.mkdir()
    home = tmp_path / "home"
    since = time.time() - 1
    with ModelServer(_answer) as server:
        env = {
            "PATH": f"{VENV_BIN}:/usr/bin:/bin",
            **agent_env(agent, str(home), str(project), server.base_url(agent)),
        }
        _run(agent, env, project, "say hi")
        _run(agent, env, project, "say hi again")
        _run(agent, env, elsewhere, "not this project")
        calls = [e for e in server.exchanges(agent) if not e.side]
    in_project = len(calls) - 1  # each run here is one model call; the last was elsewhere
    spent = role_tokens(agent, env, str(project), since)
    assert spent == Tokens(input=TOKENS_IN * in_project, output=TOKENS_OUT * in_project)
    assert role_tokens(agent, env, str(project), time.time() + 60) == Tokens()


def test_a_claude_message_written_in_pieces_is_counted_once(tmp_path: Path) -> None:
    cwd = "/src/app/.worktrees/coder"
    directory = Path(claude_project_dir(str(tmp_path), cwd))
    directory.mkdir(parents=True)
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100}
    lines = [
        {"type": "user", "cwd": cwd, "timestamp": "2026-12-01T10:00:00.000Z"},
        *(
            {
                "type": "assistant",
                "cwd": cwd,
                "timestamp": "2026-12-01T10:00:01.000Z",
                "message": {"id": "msg_1", "usage": usage, "content": [{"type": part}]},
            }
            for part in ("thinking", "text", "tool_use")
        ),
        {
            "type": "assistant",
            "cwd": cwd,
            "timestamp": "2026-12-01T09:00:00.000Z",  # before the run started
            "message": {"id": "msg_0", "usage": usage},
        },
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines) + '{"type": "assist'  # torn
    (directory / "session.jsonl").write_text(text)
    since = 1764580000.0  # 2025-12-01T09:06:40Z, well before both
    assert directory.name == "-src-app--worktrees-coder"
    spent = role_tokens("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path)}, cwd, since)
    assert spent == Tokens(input=20, output=10, cache_read=200)
    started = 1764579600.0 + 365 * 86400 + 1800  # 2026-12-01T09:30:00Z
    spent = role_tokens("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path)}, cwd, started)
    assert spent == Tokens(input=10, output=5, cache_read=100)
    assert spent.total == 115
    assert role_tokens("aider", {}, cwd, since) is None
    os.utime(directory / "session.jsonl", (0, 0))  # untouched since long before: not read
    assert role_tokens("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path)}, cwd, since) == Tokens()


def test_status_shows_what_each_role_spent_since_the_run_started(tmp_path: Path) -> None:
    from swarmforge.swarm.runrecord import RoleRecord, RunRecord
    from swarmforge.swarm.state import role_status

    config_dir = tmp_path / "claude-home"
    cwd = str(tmp_path / "project")
    directory = Path(claude_project_dir(str(config_dir), cwd))
    directory.mkdir(parents=True)
    spoken = {"input_tokens": 7, "output_tokens": 3}
    lines = [
        {"type": "assistant", "cwd": cwd, "timestamp": stamp, "message": {"id": i, "usage": spoken}}
        for i, stamp in (("a", "2026-01-01T00:00:00Z"), ("b", "2026-06-01T00:00:00Z"))
    ]
    (directory / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    role = RoleRecord(
        name="coder",
        agent="claude",
        worktree="master",
        path=cwd,
        branch="main",
        port=4000,
        mode="task",
        session="swarmforge-coder",
        env={"CLAUDE_CONFIG_DIR": str(config_dir)},
    )
    record = RunRecord(
        run_id="r1",
        project=cwd,
        backend="headless",
        state="stopped",
        started_at="2026-03-01T00:00:00Z",  # after message a, before b
        roles=[role],
    )
    shown = role_status(cwd, record, role, time.time()).as_json()
    assert shown["tokens"] == {
        "input": 7,
        "output": 3,
        "cache_read": 0,
        "cache_write": 0,
        "total": 10,
    }
