"""The scripted model server: its two wire formats over HTTP, then the real claude and codex."""

from __future__ import annotations

import http.client
import json
import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import tomli_w

from swarmforge.rehearse.model import ModelServer
from swarmforge.rehearse.openai import exchange, response, shell_call
from swarmforge.rehearse.wire import Exchange, Reply
from tests.realagents import require_cli
from tests.support import retry_until

CLAUDE_KEY = "sk-ant-rehearsal-0123456789abcdefghij"
CODEX_KEY_VARIABLE = "REHEARSE_KEY"
# claude calls nothing but its model endpoint with these.
CLAUDE_QUIET = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
}
BASH_TOOL = {"name": "Bash", "input_schema": {"type": "object"}}
EXEC_TOOL = {"type": "function", "name": "exec_command", "parameters": {"type": "object"}}
TITLE_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}},
    "required": ["title"],
}


class Scripted:
    """A decide function: each new turn echoes its prompt's last word into turns.txt."""

    def __init__(self) -> None:
        self.seen: list[Exchange] = []

    def __call__(self, exchange: Exchange) -> Reply:
        self.seen.append(exchange)
        if exchange.new_turn:
            word = shlex.quote(exchange.user_text.split()[-1])
            return Reply(command=f"echo {word} >> turns.txt && echo ran-$((6*7))")
        last = (exchange.tool_output or "").strip().splitlines()[-1:]
        return Reply(text=f"Finished: {' '.join(last)}")


def failing(exchange: Exchange) -> Reply:
    raise RuntimeError("no script for this")


def request(
    server: ModelServer, method: str, path: str, body: Any = None
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request to the server: status, headers, body."""
    host, port = server.base_url("x").split("/")[2].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    payload = None if body is None else json.dumps(body).encode()
    connection.request(method, path, body=payload, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def events(body: bytes) -> list[dict[str, Any]]:
    """The data of each server-sent event, checking that its name matches its type."""
    found = []
    for chunk in body.decode().strip().split("\n\n"):
        name, data = chunk.split("\n")
        found.append(json.loads(data.removeprefix("data: ")))
        assert name == f"event: {found[-1]['type']}"
    return found


@pytest.fixture
def scripted() -> Iterator[tuple[ModelServer, Scripted]]:
    decide = Scripted()
    with ModelServer(decide) as server:
        yield server, decide


# The wire formats, over real HTTP


def test_claude_gets_a_bash_tool_use_then_a_closing_text(
    scripted: tuple[ModelServer, Scripted],
) -> None:
    server, _ = scripted
    reminder = {"type": "text", "text": "<system-reminder>\nnotes\n</system-reminder>\n"}
    prompt = {"role": "user", "content": [reminder, {"type": "text", "text": "run step-one"}]}
    system = {"role": "system", "content": [{"type": "text", "text": "# Environment"}]}
    first = {"model": "m", "stream": True, "tools": [BASH_TOOL], "messages": [prompt, system]}
    status, headers, body = request(server, "POST", "/r/coder/v1/messages?beta=true", first)
    assert (status, headers["content-type"]) == (200, "text/event-stream")
    stream = events(body)
    assert [e["type"] for e in stream] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    tool_use = stream[1]["content_block"]
    assert (tool_use["type"], tool_use["name"], tool_use["input"]) == ("tool_use", "Bash", {})
    command = json.loads(stream[2]["delta"]["partial_json"])["command"]
    assert command.startswith("echo step-one >> turns.txt")
    assert stream[4]["delta"]["stop_reason"] == "tool_use"
    assert stream[0]["message"]["usage"]["input_tokens"] > 0

    result = {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "ran-42"}
    call = {"role": "assistant", "content": [{**tool_use, "input": {"command": command}}]}
    then = {**first, "messages": [prompt, system, call, {"role": "user", "content": [result]}]}
    stream = events(request(server, "POST", "/r/coder/v1/messages", then)[2])
    assert stream[2]["delta"] == {"type": "text_delta", "text": "Finished: ran-42"}
    assert stream[4]["delta"]["stop_reason"] == "end_turn"
    seen = [(e.role, e.api, e.new_turn, e.user_text, e.tool_output) for e in server.exchanges()]
    assert seen == [
        ("coder", "anthropic", True, "run step-one", None),
        ("coder", "anthropic", False, "", "ran-42"),
    ]


def test_claude_gets_plain_json_when_it_does_not_stream(
    scripted: tuple[ModelServer, Scripted],
) -> None:
    server, _ = scripted
    ask = {"model": "m", "tools": [BASH_TOOL], "messages": [{"role": "user", "content": "go"}]}
    status, _, body = request(server, "POST", "/r/qa/v1/messages", {**ask, "stream": False})
    message = json.loads(body)
    assert (status, message["type"], message["stop_reason"]) == (200, "message", "tool_use")
    assert message["content"][0]["input"] == {
        "command": "echo go >> turns.txt && echo ran-$((6*7))"
    }
    status, _, body = request(server, "POST", "/r/qa/v1/messages/count_tokens", ask)
    assert status == 200 and json.loads(body)["input_tokens"] > 0


def test_codex_gets_an_exec_command_call_then_a_closing_message(
    scripted: tuple[ModelServer, Scripted],
) -> None:
    server, _ = scripted
    developer = {"type": "message", "role": "developer", "content": []}
    prompt = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "do x"}],
    }
    first = {"model": "m", "stream": True, "tools": [EXEC_TOOL], "input": [developer, prompt]}
    stream = events(request(server, "POST", "/r/tester/responses", first)[2])
    assert [e["type"] for e in stream] == [
        "response.created",
        "response.output_item.done",
        "response.completed",
    ]
    call = stream[1]["item"]
    assert (call["type"], call["name"]) == ("function_call", "exec_command")
    assert json.loads(call["arguments"]) == {"cmd": "echo x >> turns.txt && echo ran-$((6*7))"}
    assert stream[2]["response"]["usage"]["total_tokens"] > 0

    output = {
        "type": "function_call_output",
        "call_id": call["call_id"],
        "output": "Out:\nran-42\n",
    }
    then = {**first, "input": [developer, prompt, call, output]}
    stream = events(request(server, "POST", "/r/tester/responses", then)[2])
    message = stream[1]["item"]
    assert (message["type"], message["role"]) == ("message", "assistant")
    assert message["content"][0]["text"] == "Finished: ran-42"
    status, _, body = request(server, "POST", "/r/tester/responses", {**then, "stream": False})
    assert status == 200 and json.loads(body)["output"][0]["content"] == message["content"]
    assert [(e.new_turn, e.user_text, e.tool_output) for e in server.exchanges("tester")] == [
        (True, "do x", None),
        (False, "", "Out:\nran-42\n"),
        (False, "", "Out:\nran-42\n"),
    ]
    assert server.exchanges("coder") == []


def test_codex_gets_whichever_shell_tool_it_offers() -> None:
    def arguments(tool: str) -> Any:
        return json.loads(shell_call("ls", [{"type": "function", "name": tool}], "1")["arguments"])

    assert arguments("shell_command") == {"command": "ls"}
    assert arguments("shell") == {"command": ["bash", "-lc", "ls"]}
    with pytest.raises(ValueError, match="no shell tool"):
        shell_call("ls", [{"type": "web_search"}], "1")


def test_a_command_codex_left_running_is_waited_on_with_write_stdin() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "exec_command"}
    still = "Chunk ID: a\nWall time: 10.0 seconds\nProcess running with session ID 7\nOutput:\n"
    output = {"type": "function_call_output", "call_id": "c1", "output": still}
    asked = {"tools": [EXEC_TOOL], "input": [call, output]}
    seen = exchange("qa", asked, 0.0)
    assert (seen.new_turn, seen.running, seen.tool_output) == (False, 7, still)
    item = response(Reply(poll=seen.running), asked, "2")["output"][0]
    assert (item["type"], item["name"]) == ("function_call", "write_stdin")
    assert json.loads(item["arguments"]) == {"session_id": 7, "chars": "", "yield_time_ms": 30000}
    ended = {**output, "output": "Process exited with code 0\nOutput:\nslept\n"}
    assert exchange("qa", {**asked, "input": [call, ended]}, 0.0).running is None


def test_side_requests_are_answered_by_the_server_in_the_format_asked() -> None:
    with ModelServer(failing) as server:
        title = {"type": "json_schema", "schema": TITLE_SCHEMA}
        user = {"role": "user", "content": "name this session"}
        claude = {
            "stream": True,
            "tools": [],
            "messages": [user],
            "output_config": {"format": title},
        }
        stream = events(request(server, "POST", "/r/coder/v1/messages", claude)[2])
        assert json.loads(stream[2]["delta"]["text"]) == {"title": "ok"}
        codex = {"stream": True, "tools": [], "input": [user], "text": {"format": title}}
        stream = events(request(server, "POST", "/r/tester/responses", codex)[2])
        assert json.loads(stream[1]["item"]["content"][0]["text"]) == {"title": "ok"}
        plain = {"stream": False, "messages": [user]}
        body = request(server, "POST", "/r/coder/v1/messages", plain)[2]
        assert json.loads(body)["content"] == [{"type": "text", "text": "ok"}]
        assert [e.side for e in server.exchanges()] == [True, True, True]
        assert server.errors() == []


def test_a_failing_decide_is_an_error_each_cli_reports_without_retrying() -> None:
    with ModelServer(failing) as server:
        ask = {"stream": True, "tools": [BASH_TOOL], "messages": [{"role": "user", "content": "x"}]}
        status, headers, body = request(server, "POST", "/r/coder/v1/messages", ask)
        assert (status, headers["x-should-retry"]) == (500, "false")
        assert "RuntimeError: no script for this" in json.loads(body)["error"]["message"]
        ask = {"stream": True, "tools": [EXEC_TOOL], "input": "x"}
        status, _, body = request(server, "POST", "/r/tester/responses", ask)
        assert status == 400 and "no script" in json.loads(body)["error"]["message"]
        assert request(server, "POST", "/r/tester/responses", None)[0] == 400
        assert len(server.exchanges()) == 2
        assert len(server.errors()) == 3


def test_unknown_paths_are_404_and_recorded(scripted: tuple[ModelServer, Scripted]) -> None:
    server, _ = scripted
    status, _, body = request(server, "GET", "/r/coder/v1/models")
    assert status == 404 and json.loads(body)["error"]["type"] == "not_found_error"
    assert request(server, "POST", "/v1/messages", {})[0] == 404
    assert request(server, "HEAD", "/r/coder/api/hello")[0] == 200
    assert [e.split(":")[0] for e in server.errors()] == [
        "404 GET /r/coder/v1/models",
        "404 POST /v1/messages",
    ]
    assert [(h.role, h.status) for h in server.hits()] == [
        ("coder", 404),
        ("", 404),
        ("coder", 200),
    ]


# The real CLIs, offline


def path_env() -> str:
    """PATH for an agent: node (codex's launcher needs it) and the system's tools."""
    node = shutil.which("node")
    return os.pathsep.join([*([str(Path(node).parent)] if node else []), "/usr/bin", "/bin"])


def claude_env(home: Path, base_url: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": path_env(),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": CLAUDE_KEY,
        **CLAUDE_QUIET,
    }


def codex_env(home: Path, base_url: str, trusted: Path | None = None) -> dict[str, str]:
    """The environment of a codex whose CODEX_HOME points it at the server."""
    config: dict[str, Any] = {
        "model": "rehearsal",
        "model_provider": "rehearse",
        # The managed app-server daemon would outlive the agent.
        "features": {"daemon_auto_start": False},
        "model_providers": {
            "rehearse": {
                "name": "rehearse",
                "base_url": base_url,
                "wire_api": "responses",
                "env_key": CODEX_KEY_VARIABLE,
            }
        },
    }
    if trusted is not None:
        config["projects"] = {str(trusted): {"trust_level": "trusted"}}
    (home / "codex").mkdir(parents=True)
    (home / "codex" / "config.toml").write_text(tomli_w.dumps(config))
    return {
        "PATH": path_env(),
        "HOME": str(home),
        "CODEX_HOME": str(home / "codex"),
        CODEX_KEY_VARIABLE: "rehearsal-key",
    }


def run_headless(
    argv: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )


def main_loop(server: ModelServer) -> list[tuple[bool, str, str | None]]:
    """The main-loop exchanges, with only the last line of each tool output."""
    return [
        (e.new_turn, e.user_text, e.tool_output.strip().splitlines()[-1] if e.tool_output else None)
        for e in server.exchanges()
        if not e.side
    ]


@pytest.mark.slow
def test_claude_headless_runs_the_command_and_prints_the_closing_text(
    scripted: tuple[ModelServer, Scripted], tmp_path: Path
) -> None:
    claude = require_cli("claude")
    server, _ = scripted
    (work := tmp_path / "work").mkdir()
    argv = [claude, "-p", "--permission-mode", "acceptEdits", "--", "please run step-one"]
    result = run_headless(argv, work, claude_env(tmp_path / "home", server.base_url("coder")))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (work / "turns.txt").read_text() == "step-one\n"
    assert main_loop(server) == [(True, "please run step-one", None), (False, "", "ran-42")]
    assert result.stdout.strip() == "Finished: ran-42"
    assert server.errors() == []


@pytest.mark.slow
def test_codex_headless_runs_the_command_and_prints_the_closing_text(
    scripted: tuple[ModelServer, Scripted], tmp_path: Path
) -> None:
    codex = require_cli("codex")
    server, _ = scripted
    (work := tmp_path / "work").mkdir()
    env = codex_env(tmp_path / "home", server.base_url("tester"))
    argv = [codex, "exec", "-C", str(work), "--skip-git-repo-check"]
    argv += ["--dangerously-bypass-approvals-and-sandbox", "-c", "allow_login_shell=false"]
    result = run_headless([*argv, "--", "please run step-one"], work, env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (work / "turns.txt").read_text() == "step-one\n"
    assert main_loop(server) == [(True, "please run step-one", None), (False, "", "ran-42")]
    assert result.stdout.strip() == "Finished: ran-42"
    assert server.errors() == []


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_each_cli_reports_a_failing_decide_after_one_request(agent: str, tmp_path: Path) -> None:
    cli = require_cli(agent)
    (work := tmp_path / "work").mkdir()
    with ModelServer(failing) as server:
        if agent == "claude":
            env = claude_env(tmp_path / "home", server.base_url("coder"))
            result = run_headless([cli, "-p", "--", "hello"], work, env)
        else:
            env = codex_env(tmp_path / "home", server.base_url("tester"))
            result = run_headless([cli, "exec", "--skip-git-repo-check", "--", "hello"], work, env)
    assert result.returncode != 0
    assert "no script for this" in result.stdout + result.stderr
    assert len(server.hits()) == len(server.errors()) == 1


# The real CLIs' interactive TUIs, in tmux


class Panes:
    """A private tmux server for one test, and the agents running in it."""

    def __init__(self) -> None:
        self.socket = f"sf-model-{uuid.uuid4().hex[:8]}"

    def tmux(self, *args: str) -> str:
        argv = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    def start(self, cwd: Path, env: dict[str, str], argv: list[str]) -> None:
        """Run `argv` in a new session, with exactly `env` as its environment."""
        assignments = [f"{k}={v}" for k, v in {"TERM": "xterm-256color", **env}.items()]
        where = ["-s", "agent", "-x", "200", "-y", "50", "-c", str(cwd)]
        self.tmux("new-session", "-d", *where, "/usr/bin/env", "-i", *assignments, *argv)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "agent")

    def type_message(self, text: str) -> None:
        """Type a message as a bracketed paste, then Enter, as the swarm wakes an agent."""
        self.tmux("set-buffer", "-b", "message", text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "message", "-t", "agent")
        # Not synchronisation: an Enter read together with the paste would join the paste.
        time.sleep(0.1)
        self.tmux("send-keys", "-t", "agent", "Enter")

    def close(self) -> None:
        """End the agents and everything they started, then the tmux server."""
        try:
            pids = [int(p) for p in self.tmux("list-panes", "-a", "-F", "#{pane_pid}").split()]
        except subprocess.CalledProcessError:
            return
        procs = []
        for pid in pids:
            try:
                pane = psutil.Process(pid)
                procs += [pane, *pane.children(recursive=True)]
            except psutil.NoSuchProcess:
                continue
        for proc in procs:
            try:
                proc.terminate()
            except psutil.NoSuchProcess:
                continue
        psutil.wait_procs(procs, timeout=5)
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def alive_under(root: Path) -> list[psutil.Process]:
    """Processes whose command line or working directory lies under `root`."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd", "status"]):
        info = proc.info
        if info["status"] == psutil.STATUS_ZOMBIE:
            continue
        places = [*(info["cmdline"] or []), info["cwd"] or ""]
        if any(str(root) in place for place in places):
            found.append(proc)
    return found


@pytest.fixture
def panes(tmp_path: Path) -> Iterator[Panes]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    panes = Panes()
    try:
        yield panes
    finally:
        panes.close()
        for proc in alive_under(tmp_path):
            proc.kill()


def play_two_turns(server: ModelServer, panes: Panes, work: Path) -> None:
    """The opening prompt's turn, then a typed message's, each running a command."""
    turns = work / "turns.txt"
    retry_until(lambda: turns.exists() and "Finished: ran-42" in panes.screen(), timeout=20)
    assert turns.read_text() == "step-one\n"
    panes.type_message("now run step-two")
    retry_until(lambda: len(main_loop(server)) == 4 and panes.screen().count("Finished") == 2, 20)
    assert turns.read_text() == "step-one\nstep-two\n"
    assert main_loop(server) == [
        (True, "please run step-one", None),
        (False, "", "ran-42"),
        (True, "now run step-two", None),
        (False, "", "ran-42"),
    ]
    assert server.errors() == []


@pytest.mark.slow
def test_claude_tui_starts_without_a_dialog_and_takes_a_typed_message(
    scripted: tuple[ModelServer, Scripted], panes: Panes, repo: Path, tmp_path: Path
) -> None:
    claude = require_cli("claude")
    server, decide = scripted
    home = tmp_path / "home"
    home.mkdir()
    seeded = {
        "hasCompletedOnboarding": True,  # else a first-run check calls api.anthropic.com
        "projects": {str(repo): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []},
    }
    (home / ".claude.json").write_text(json.dumps(seeded))
    env = claude_env(home, server.base_url("coder"))
    panes.start(repo, env, [claude, "--permission-mode", "acceptEdits", "please run step-one"])
    play_two_turns(server, panes, repo)
    assert not any(e.side for e in decide.seen)


@pytest.mark.slow
def test_codex_tui_starts_without_a_dialog_and_takes_a_typed_message(
    scripted: tuple[ModelServer, Scripted], panes: Panes, repo: Path, tmp_path: Path
) -> None:
    codex = require_cli("codex")
    server, decide = scripted
    home = tmp_path / "home"
    env = codex_env(home, server.base_url("tester"), trusted=repo)
    argv = [codex, "-C", str(repo), "-c", "allow_login_shell=false"]
    panes.start(
        repo, env, [*argv, "--dangerously-bypass-approvals-and-sandbox", "please run step-one"]
    )
    play_two_turns(server, panes, repo)
    assert not any(e.side for e in decide.seen)
    assert not [p for p in alive_under(home) if "app-server" in " ".join(p.cmdline())]
