"""The tmux backend against a real tmux server on a private socket per test."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarmforge.errors import SwarmforgeError
from swarmforge.proc import liveness
from swarmforge.proc.awake import sleep_inhibitor_argv
from swarmforge.tmux.server import Tmux
from swarmforge.tmux.spec import SessionSpec
from tests.support import kill_session, retry_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

MARKER = "sf-fake-agent"
# Records how it was started, then appends every line it reads to <out>.lines.
AGENT = """
import json, os, sys
out = os.environ["FAKE_AGENT_OUT"]
info = {"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd(), "pid": os.getpid()}
with open(out + ".tmp", "w") as f:
    json.dump(info, f)
os.replace(out + ".tmp", out + ".json")
for line in sys.stdin:
    with open(out + ".lines", "a") as f:
        f.write(line)
"""
BASE_ONE = "set -g base-index 1\nset -g pane-base-index 1\n"


class Agent:
    """A fake interactive agent's command line and the files it writes."""

    def __init__(self, tmp_path: Path, name: str = "agent") -> None:
        self.out = tmp_path / name
        self.env = {"FAKE_AGENT_OUT": str(self.out)}

    def argv(self, *extra: str) -> list[str]:
        return [sys.executable, "-c", AGENT, MARKER, *extra]

    def info(self) -> dict[str, Any]:
        path = self.out.with_name(self.out.name + ".json")
        retry_until(path.exists)
        result: dict[str, Any] = json.loads(path.read_text())
        return result

    def lines(self) -> str:
        path = self.out.with_name(self.out.name + ".lines")
        return path.read_text() if path.exists() else ""


def new_session(tmux: Tmux, name: str, cwd: str, argv: list[str], env: dict[str, str]) -> bool:
    """Start one session as `up` does; False if it already existed."""
    return tmux.start_all([SessionSpec(name, cwd, argv, env)], 0.0) == [name]


def _tmux(tmux: Tmux, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", tmux.socket, *args], capture_output=True, text=True)


def sessions(tmux: Tmux) -> list[str]:
    """The server's session names (none when no server runs)."""
    listed = _tmux(tmux, "list-sessions", "-F", "#{session_name}")
    return listed.stdout.splitlines() if listed.returncode == 0 else []


def _server(tmp_path: Path, config_text: str | None) -> Tmux:
    config = "/dev/null"  # the user's ~/.tmux.conf must not reach the tests
    if config_text is not None:
        config = str(tmp_path / "tmux.conf")
        Path(config).write_text(config_text)
    return Tmux(f"sf-test-{uuid.uuid4().hex[:12]}", config=config)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    server = _server(tmp_path, None)
    yield server
    server.kill_server()


@pytest.fixture(params=[None, BASE_ONE], ids=["base-0", "base-1"])
def any_tmux(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tmux]:
    server = _server(tmp_path, request.param)
    yield server
    server.kill_server()


def test_the_agent_gets_its_argv_environment_and_directory_verbatim(
    tmux: Tmux, tmp_path: Path
) -> None:
    agent = Agent(tmp_path)
    cwd = tmp_path / "work #S dir;"
    cwd.mkdir()
    env = {**agent.env, "SWARMFORGE_ROLE": "qa", "ODD": "a b $HOME #{pane_id};"}
    extra = ["two words", "$HOME", "ends;", "#{pane_id}", "-x", ""]
    assert new_session(tmux, "qa", str(cwd), agent.argv(*extra), env) is True
    info = agent.info()
    assert info["argv"] == ["-c", MARKER, *extra]
    assert info["env"]["SWARMFORGE_ROLE"] == "qa"
    assert info["env"]["ODD"] == env["ODD"]
    assert Path(info["cwd"]) == cwd.resolve()


def test_a_single_argument_command_runs_without_a_shell(tmux: Tmux, tmp_path: Path) -> None:
    agent = Agent(tmp_path)
    script = tmp_path / "dir with $HOME" / "agent"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n# {MARKER}\n{AGENT}")
    script.chmod(0o755)
    assert new_session(tmux, "solo", str(tmp_path), [str(script)], agent.env)
    info = agent.info()
    assert info["argv"] == [str(script)]
    assert tmux.pane_pid("solo") == info["pid"]


def test_a_session_is_started_once(tmux: Tmux, tmp_path: Path) -> None:
    agent = Agent(tmp_path)
    assert new_session(tmux, "coder", str(tmp_path), agent.argv(), agent.env) is True
    pid = agent.info()["pid"]
    assert new_session(tmux, "coder", str(tmp_path), agent.argv(), agent.env) is False
    assert sessions(tmux) == ["coder"]
    assert tmux.pane_pid("coder") == pid


def test_base_indexes_come_from_the_config_with_or_without_a_server(tmp_path: Path) -> None:
    for config_text, expected in ((None, (0, 0)), (BASE_ONE, (1, 1))):
        server = _server(tmp_path, config_text)
        try:
            assert server.base_indexes() == expected
            new_session(server, "s", str(tmp_path), ["cat", "-"], {})
            assert server.base_indexes() == expected
        finally:
            server.kill_server()


def test_pane_pid_is_the_agents_pid(any_tmux: Tmux, tmp_path: Path) -> None:
    agent = Agent(tmp_path)
    assert any_tmux.pane_pid("coder") is None
    new_session(any_tmux, "coder", str(tmp_path), agent.argv(), agent.env)
    pid = any_tmux.pane_pid("coder")
    assert pid is not None
    assert pid == agent.info()["pid"]
    assert MARKER in psutil.Process(pid).cmdline()


def test_start_all_pauses_only_between_two_creations(tmux: Tmux, tmp_path: Path) -> None:
    new_session(tmux, "old", str(tmp_path), ["cat", "-"], {})
    pauses: list[float] = []
    specs = [
        SessionSpec(name, str(tmp_path), ["cat", "-"], {"ROLE": name})
        for name in ("a", "old", "b", "c")
    ]
    assert tmux.start_all(specs, 0.25, sleep=pauses.append) == ["a", "b", "c"]
    assert pauses == [0.25, 0.25]
    assert sorted(sessions(tmux)) == ["a", "b", "c", "old"]
    assert tmux.start_all(specs, 0.25, sleep=pauses.append) == []
    assert pauses == [0.25, 0.25]


def test_has_session_matches_names_exactly(tmux: Tmux, tmp_path: Path) -> None:
    new_session(tmux, "qa2", str(tmp_path), ["cat", "-"], {})
    assert tmux.has_session("qa2")
    assert not tmux.has_session("qa")
    assert tmux.pane_pid("qa") is None
    assert not kill_session(tmux, "qa")
    assert new_session(tmux, "qa", str(tmp_path), ["cat", "-"], {}) is True
    assert kill_session(tmux, "qa")
    assert sessions(tmux) == ["qa2"]


def test_kill_session_and_kill_server_end_the_agents(tmux: Tmux, tmp_path: Path) -> None:
    first, second = Agent(tmp_path, "first"), Agent(tmp_path, "second")
    new_session(tmux, "one", str(tmp_path), first.argv(), first.env)
    new_session(tmux, "two", str(tmp_path), second.argv(), second.env)
    pids = [first.info()["pid"], second.info()["pid"]]
    assert kill_session(tmux, "one") is True
    retry_until(lambda: not liveness.is_alive(pids[0]))
    assert sessions(tmux) == ["two"]
    assert tmux.server_running()
    tmux.kill_server()
    assert not tmux.server_running()
    assert sessions(tmux) == []
    retry_until(lambda: not liveness.is_alive(pids[1]))
    tmux.kill_server()  # nothing runs: not an error
    assert new_session(tmux, "one", str(tmp_path), ["cat", "-"], {}) is True


def test_names_tmux_would_alter_are_refused(tmux: Tmux, tmp_path: Path) -> None:
    for name in ("", "a.b", "a:b", "a#b"):
        with pytest.raises(SwarmforgeError, match="Invalid tmux session name"):
            new_session(tmux, name, str(tmp_path), ["cat", "-"], {})
    with pytest.raises(SwarmforgeError, match="No command"):
        new_session(tmux, "qa", str(tmp_path), [], {})
    with pytest.raises(SwarmforgeError, match="environment variable"):
        new_session(tmux, "qa", str(tmp_path), ["cat", "-"], {"A=B": "c"})
    assert not tmux.server_running()


def test_a_command_tmux_cannot_take_is_reported(tmux: Tmux, tmp_path: Path) -> None:
    with pytest.raises(SwarmforgeError, match="command too long") as caught:
        new_session(tmux, "qa", str(tmp_path), ["cat", "x" * 20_000], {})
    assert "16 KB" in caught.value.hint


def test_a_missing_tmux_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SwarmforgeError, match="Cannot find 'tmux'"):
        Tmux("sf-test-none").server_running()


def _bin(tmp_path: Path, *names: str) -> str:
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for name in names:
        (directory / name).write_text("#!/bin/sh\n")
        (directory / name).chmod(0o755)
    return str(directory)


def test_the_sleep_inhibitor_fits_the_platform(tmp_path: Path) -> None:
    assert sleep_inhibitor_argv(platform="linux", path=_bin(tmp_path, "systemd-inhibit")) == [
        "systemd-inhibit",
        "--what=idle:sleep",
        "--who=swarmforge",
        "--why=a swarm is running",
        "sleep",
        "infinity",
    ]
    (tmp_path / "bin" / "systemd-inhibit").unlink()
    caffeinate = _bin(tmp_path, "caffeinate")
    assert sleep_inhibitor_argv(platform="darwin", path=caffeinate) == ["caffeinate", "-i"]
    assert sleep_inhibitor_argv(platform="linux", path=caffeinate) is None
    assert sleep_inhibitor_argv(platform="darwin", path=str(tmp_path / "empty")) is None


def test_a_session_ends_with_its_agent_despite_a_remain_on_exit_config(tmp_path: Path) -> None:
    server = _server(tmp_path, "set -g remain-on-exit on\n")
    try:
        new_session(server, "keep", str(tmp_path), ["cat", "-"], {})
        assert new_session(server, "brief", str(tmp_path), ["sh", "-c", "exit 3"], {}) is True
        retry_until(lambda: not server.has_session("brief"))
        assert sessions(server) == ["keep"]
    finally:
        server.kill_server()


def test_start_all_checks_every_session_before_starting_any(tmux: Tmux, tmp_path: Path) -> None:
    specs = [SessionSpec("a", str(tmp_path), ["cat", "-"]), SessionSpec("b.c", str(tmp_path), [])]
    with pytest.raises(SwarmforgeError, match="Invalid tmux session name"):
        tmux.start_all(specs, 0.0, sleep=lambda _: None)
    assert not tmux.server_running()
