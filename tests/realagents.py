"""Finding the real agent CLIs (claude, codex) that `setup.sh` installs for the tests.

A test that needs one skips when it is missing, with the reason, except in CI
(`CI` set), where a missing CLI is a failure: CI must never skip these tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import NoReturn

import pytest
import tomli_w

from swarmforge.config import sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.rehearse.agentenv import agent_env
from swarmforge.rehearse.model import ModelServer
from swarmforge.rehearse.wire import Exchange, Reply
from swarmforge.swarm.session.down import down as swarm_down
from swarmforge.swarm.session.up import up as swarm_up
from swarmforge.swarm.status.role import AgentState, role_status
from swarmforge.tmux.server import project_socket
from tests.support import retry_until

VENV_BIN = str(Path(sys.executable).parent)


def require_cli(name: str) -> str:
    """The absolute path of command `name` (an agent CLI, chromium); skips (or, in CI,
    fails) the test without it."""
    found = shutil.which(name, path=VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    if found is None:
        unavailable(f"{name} is not installed (./setup.sh installs it)")
    return found


def unavailable(reason: str) -> NoReturn:
    """Skip the test for `reason`, or fail it in CI, where everything must be installed."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


class LiveSwarm:
    """A swarm of real agents in tmux; the model has each run `first` commands, then talk."""

    def __init__(self, repo: Path, homes: Path) -> None:
        self.repo = repo
        self.homes = homes
        self.server = ModelServer(self.decide)
        self.serving = False
        self.env: dict[str, dict[str, str]] = {}
        self.first: list[str] = []

    def decide(self, exchange: Exchange) -> Reply:
        if exchange.new_turn and self.first:
            return Reply(command=self.first.pop(0))
        return Reply(text="Ready.")

    def up(
        self, keep_codex_daemon: bool = False, path: str | None = None
    ) -> sessionrecord.SessionRecord:
        """Start the swarm; `path`: the agents' PATH after the CLIs' directories (default:
        ours)."""
        if self.serving:  # started again: the same homes, as a machine keeps them
            record, _ = swarm_up(str(self.repo), "tmux", stagger=0, role_env=self.env)
            return record
        self.server.start()
        self.serving = True
        env = {}
        config = load_config(str(self.repo))
        for role in config.roles:
            home = self.homes / role.name
            env[role.name] = agent_env(
                role.agent, str(home), str(self.repo), self.server.base_url(role.name)
            )
            env[role.name]["PATH"] = agents_path() + (
                path or os.environ.get("PATH", "/usr/bin:/bin")
            )
            if keep_codex_daemon:
                toml = home / ".codex" / "config.toml"
                settings = tomllib.loads(toml.read_text())
                del settings["features"]  # codex then starts its shared app-server
                toml.write_text(tomli_w.dumps(settings))
        self.env = env
        record, _ = swarm_up(str(self.repo), "tmux", stagger=0, role_env=env)
        return record

    def openings(self, role: str) -> list[Exchange]:
        # Side requests (codex's title for the session) quote the prompt too: not counted.
        return [
            e
            for e in self.server.exchanges(role)
            if e.new_turn and not e.side and OPENING in e.user_text
        ]

    def wait_openings(self, role: str, count: int) -> None:
        """Wait until `role`'s agent has sent its opening prompt `count` times; say why not."""
        try:
            retry_until(lambda: len(self.openings(role)) >= count, timeout=60)
        except AssertionError:
            log = self.repo / ".swarmforge" / "logs" / f"{role}.log"
            seen = [(e.new_turn, e.side, e.user_text[:80]) for e in self.server.exchanges(role)]
            screen = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
            raise AssertionError(
                f"{role}: requests {seen}, errors {self.server.errors()}\n{screen}"
            ) from None
        assert len(self.openings(role)) == count

    def down(self) -> None:
        try:
            swarm_down(str(self.repo))
        finally:
            self.server.stop()


OPENING = "Read swarmforge/constitution.prompt"


def agents_path() -> str:
    """The directories of the claude and codex CLIs, as a PATH prefix."""
    dirs = {str(Path(require_cli(name)).parent) for name in ("claude", "codex")}
    return "".join(f"{d}:" for d in sorted(dirs))


needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def tool_results(live: LiveSwarm, role: str) -> list[str]:
    """The outputs of the tool calls that `role`'s agent has sent back to the model."""
    return [e.tool_output for e in live.server.exchanges(role) if e.tool_output is not None]


def screen_of(repo: Path, role: str) -> str:
    """What `role`'s tmux pane shows now."""
    record = sessionrecord.load(str(repo))
    found = record.role(role) if record is not None else None
    assert found is not None
    socket = project_socket(str(repo))
    target = f"={found.session_name}:"
    shown = subprocess.run(
        ["tmux", "-L", socket, "capture-pane", "-p", "-t", target], capture_output=True, text=True
    )
    return shown.stdout


def agent_state(repo: Path, role: str) -> AgentState | None:
    record = sessionrecord.load(str(repo))
    assert record is not None
    found = record.role(role)
    assert found is not None
    return role_status(str(repo), record, found, 0.0).agent_state


def wait_state(
    repo: Path, role: str, wanted: str, because: str = "", timeout: float = 60
) -> AgentState:
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


def without_bwrap(directory: Path) -> str:
    """A PATH with every program of /usr/bin and /bin but bubblewrap, as on a machine
    without it."""
    directory.mkdir()
    for source in (Path("/usr/bin"), Path("/bin")):
        for program in source.iterdir():
            link = directory / program.name
            if program.name != "bwrap" and not link.exists():
                link.symlink_to(program)
    return str(directory)
