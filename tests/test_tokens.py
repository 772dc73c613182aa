"""Tokens summed from the session files the real claude and codex write, against the scripted
model's usage figures."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from swarmforge import times
from swarmforge.agents.claude.tokens import claude_project_dir, claude_tokens
from swarmforge.agents.codex.tokens import codex_tokens
from swarmforge.agents.registry import agent as find_agent
from swarmforge.agents.tokens import Meter, Tokens
from swarmforge.rehearse.agentenv import agent_env
from swarmforge.rehearse.model import ModelServer
from swarmforge.rehearse.wire import TOKENS_IN, TOKENS_OUT, Exchange, Reply
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
    spent = find_agent(agent).tokens(env, str(project), since)
    assert spent == Tokens(input=TOKENS_IN * in_project, output=TOKENS_OUT * in_project)
    assert find_agent(agent).tokens(env, str(project), time.time() + 60) == Tokens()


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
    spent = find_agent("claude").tokens({"CLAUDE_CONFIG_DIR": str(tmp_path)}, cwd, since)
    assert spent == Tokens(input=20, output=10, cache_read=200)
    started = 1764579600.0 + 365 * 86400 + 1800  # 2026-12-01T09:30:00Z
    spent = find_agent("claude").tokens({"CLAUDE_CONFIG_DIR": str(tmp_path)}, cwd, started)
    assert spent == Tokens(input=10, output=5, cache_read=100)
    assert spent.total == 115
    assert find_agent("aider").tokens({}, cwd, since) is None
    os.utime(directory / "session.jsonl", (0, 0))  # untouched since long before: not read
    assert find_agent("claude").tokens({"CLAUDE_CONFIG_DIR": str(tmp_path)}, cwd, since) == Tokens()


def test_status_shows_what_each_role_spent_since_the_run_started(tmp_path: Path) -> None:
    from swarmforge.config.rolerecord import RoleRecord
    from swarmforge.config.sessionrecord import SessionRecord
    from swarmforge.swarm.status.role import role_status

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
        env={"CLAUDE_CONFIG_DIR": str(config_dir)},
    )
    record = SessionRecord(
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


def _at(stamp: str) -> float:
    return times.parse(stamp)


SINCE = _at("2026-12-01T09:00:00Z")  # before every line written below


def _claude_line(ident: str, spent: int, cwd: str, stamp: str = "2026-12-01T10:00:00Z") -> str:
    usage = {"input_tokens": spent, "output_tokens": 1, "cache_creation_input_tokens": 2}
    entry = {"type": "assistant", "cwd": cwd, "timestamp": stamp}
    return json.dumps({**entry, "message": {"id": ident, "usage": usage}}) + "\n"


def _codex_meta(cwd: str) -> str:
    meta = {"type": "session_meta", "timestamp": "2026-12-01T10:00:00Z", "payload": {"cwd": cwd}}
    return json.dumps(meta) + "\n"


def _codex_line(spent: int) -> str:
    total = {"input_tokens": spent, "output_tokens": 3, "cached_input_tokens": 5}
    payload = {"type": "token_count", "info": {"total_token_usage": total}}
    return json.dumps({"type": "event_msg", "payload": payload}) + "\n"


def _append(path: Path, text: str) -> None:
    with path.open("a") as f:
        f.write(text)


def test_the_meter_agrees_with_a_whole_read_as_claude_transcripts_change(tmp_path: Path) -> None:
    cwd = "/src/app"
    directory = Path(claude_project_dir(str(tmp_path), cwd))
    directory.mkdir(parents=True)
    first, second = directory / "a.jsonl", directory / "b.jsonl"
    meter = Meter()

    def spent(since: float = SINCE) -> int:
        kept = claude_tokens(str(tmp_path), cwd, since, meter)
        assert kept == claude_tokens(str(tmp_path), cwd, since, Meter()), "as a whole read finds"
        return kept.input

    first.write_text(_claude_line("m1", 10, cwd) + _claude_line("m1", 10, cwd))
    assert spent() == 10
    later = "2026-12-01T11:00:00Z"
    _append(first, _claude_line("m2", 20, cwd, later) + _claude_line("x", 99, "/other", later))
    assert spent() == 30
    line = _claude_line("m3", 40, cwd, later)
    _append(first, line[:25])  # half written: not JSON yet
    assert spent() == 30
    _append(first, line[25:-1])  # whole but for its newline: counts as it stands
    assert spent() == 70
    _append(first, "\n" + line)  # its newline, then the same message again: once
    assert spent() == 70
    # A second session repeating m2 (a resumed conversation), and a message being written.
    second.write_text(_claude_line("m2", 20, cwd, later) + _claude_line("m4", 80, cwd, later)[:-1])
    assert spent() == 150
    assert spent(_at("2026-12-01T10:30:00Z")) == 140  # m1 is older; each `since` apart
    assert spent() == 150
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(_claude_line("m5", 5, cwd))
    replacement.replace(first)  # a file replaced: read from its start
    assert spent() == 105
    # Rewritten in place, longer than before: read from its start too.
    first.write_text(_claude_line("m6", 60, cwd) + _claude_line("m7", 70, cwd) + "\n" * 400)
    assert spent() == 230
    second.write_text("")  # truncated
    assert spent() == 130


def test_the_meter_agrees_with_a_whole_read_as_codex_rollouts_change(tmp_path: Path) -> None:
    cwd = "/src/app"
    day = tmp_path / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    ours, theirs, starting = (day / f"rollout-{n}.jsonl" for n in ("a", "b", "c"))
    meter = Meter()

    def spent() -> Tokens:
        kept = codex_tokens(str(tmp_path), cwd, SINCE, meter)
        assert kept == codex_tokens(str(tmp_path), cwd, SINCE, Meter()), "as a whole read finds"
        return kept

    ours.write_text(_codex_meta(cwd) + _codex_line(100))
    assert spent() == Tokens(input=100, output=3, cache_read=5)
    _append(ours, _codex_line(150))
    assert spent().input == 150
    line = _codex_line(300)
    _append(ours, line[:30])
    assert spent().input == 150
    _append(ours, line[30:-1])
    assert spent().input == 300
    _append(ours, "\n")
    assert spent().input == 300
    theirs.write_text(_codex_meta("/src/other") + _codex_line(1000))
    assert spent().input == 300
    meta = _codex_meta(cwd)
    starting.write_text(meta[:-1])  # a session's first line, still without its newline
    assert spent() == Tokens(input=300, output=3, cache_read=5)
    _append(starting, "\n" + _codex_line(7))
    assert spent().input == 307
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(_codex_meta(cwd) + _codex_line(1))
    replacement.replace(ours)
    assert spent().input == 8


def test_lines_already_read_are_not_read_again(tmp_path: Path) -> None:
    cwd = "/src/app"
    directory = Path(claude_project_dir(str(tmp_path), cwd))
    directory.mkdir(parents=True)
    path = directory / "a.jsonl"
    # The first message, then enough after it that an edit to it is well before the end.
    path.write_text(
        _claude_line("m1", 10, cwd) + "".join(_claude_line(f"n{i}", 0, cwd) for i in range(9))
    )
    meter = Meter(max_groups=1)
    assert claude_tokens(str(tmp_path), cwd, SINCE, meter).input == 10
    with path.open("r+b") as f:  # an edit no agent makes: only a meter reading again sees it
        text = f.read()
        f.seek(text.index(b'"input_tokens": 10'))
        f.write(b'"input_tokens": 90')
    assert claude_tokens(str(tmp_path), cwd, SINCE, meter).input == 10
    _append(path, _claude_line("m2", 1, cwd))
    assert claude_tokens(str(tmp_path), cwd, SINCE, meter).input == 11
    assert claude_tokens(str(tmp_path), cwd, SINCE, Meter()).input == 91
    # Another group of files pushes this one out of a meter that keeps one: read afresh.
    assert claude_tokens(str(tmp_path), "/src/other", SINCE, meter) == Tokens()
    assert claude_tokens(str(tmp_path), cwd, SINCE, meter).input == 91
