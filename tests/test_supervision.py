"""Agents in tmux panes: their environment, their exits, restarts, and a failed `up`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from swarmforge.agents import lifecycle
from swarmforge.config import sessionrecord
from swarmforge.config.settings import load_settings, parse_settings
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import running_pid
from swarmforge.errors import CorruptFile, shell_status
from swarmforge.git import captures
from swarmforge.tmux.server import project_socket
from tests.support import git, make_swarm, nothing_left, retry_until
from tests.support import run_cli as sf

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

# Says what it sees, then exits 3 on its first life and stays up on later ones.
AGENT = """#!/bin/sh
n=$(cat lives 2>/dev/null || echo 0); n=$((n + 1)); echo $n > lives
echo "life $n: helpers at $(command -v ready_for_next.sh), cli at $(command -v swarmforge)"
printf '%s\\n' "$PATH" > path-seen.txt
[ "$n" -gt 1 ] && exec sleep 300
echo "about to fail"
exit 3
"""


def _status(repo: Path) -> dict[str, object]:
    result = sf("status", "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    state: dict[str, object] = json.loads(result.stdout)
    return state


def _process(repo: Path) -> dict[str, object]:
    roles = _status(repo)["roles"]
    assert isinstance(roles, list)
    process: dict[str, object] = roles[0]["process"]
    return process


def _swarm(repo: Path, toml: str = "") -> Path:
    make_swarm(repo, "window coder ./agent.sh master\n", {"agent.sh": AGENT})
    (repo / "swarmforge" / "roles" / "coder.prompt").write_text("Code.\n")
    if toml:
        (repo / "swarmforge" / "swarmforge.toml").write_text(toml)
    return repo


def test_an_agent_that_fails_is_shown_exited_then_restarted(repo: Path) -> None:
    _swarm(repo)
    # A tmux server started by a client with a bare PATH: panes would get that PATH.
    socket = project_socket(str(repo))
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "other"], env=env, check=True)
    r = sf("up", "--stagger", "0", cwd=repo)
    assert r.returncode == 0, r.stderr
    try:
        # The exit is kept after the restart: a loaded machine may only look once the agent
        # has been restarted, a second after it exited.
        retry_until(lambda: _process(repo).get("exit_code") == 3, timeout=20)
        process = _process(repo)
        if process["state"] == "exited":
            assert process["restart_at"]
        assert any("about to fail" in line for line in process["last_lines"])  # type: ignore[attr-defined]
        retry_until(lambda: _process(repo).get("state") == "running", timeout=20)
        assert _process(repo)["restarts"] == 1
        # Its work as the exited agent left it was captured before the restart.
        exits = [c for c in captures.listed(str(repo), "coder") if c.trigger == "agent exited"]
        assert exits and git(repo, "show", f"{exits[0].commit}:path-seen.txt")
        bin_dir = (repo / ".swarmforge" / "bin").resolve()  # where the state lies
        assert (repo / "path-seen.txt").read_text().startswith(f"{bin_dir}:")
        log = (repo / ".swarmforge" / "logs" / "coder.log").read_text()
        assert f"helpers at {bin_dir}/ready_for_next.sh" in log
        assert f"cli at {bin_dir}/swarmforge" in log
        assert "life 2" in log
    finally:
        assert sf("down", cwd=repo).returncode == 0
    nothing_left(repo)


@pytest.mark.slow
def test_restart_never_leaves_an_exited_agent_down(repo: Path) -> None:
    _swarm(repo, '[roles.coder]\nrestart = "never"\n')
    assert sf("up", "--stagger", "0", cwd=repo).returncode == 0
    try:
        retry_until(lambda: _process(repo).get("state") == "exited", timeout=20)
        process = _process(repo)
        assert process["exit_code"] == 3 and process["restart_at"] is None
        shown = sf("status", cwd=repo).stdout
        assert "exited 3 at" in shown and "not restarted" in shown and "about to fail" in shown
        assert (repo / "lives").read_text() == "1\n"
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


# Cannot start: says why and exits at once, every time.
QUITTER = """#!/bin/sh
n=$(cat lives 2>/dev/null || echo 0); echo $((n + 1)) > lives
echo "cannot reach the model"
exit 1
"""


def test_an_agent_that_cannot_start_is_left_down_after_its_quick_exits(repo: Path) -> None:
    make_swarm(repo, "window coder ./agent.sh master\n", {"agent.sh": QUITTER})
    (repo / "swarmforge" / "roles" / "coder.prompt").write_text("Code.\n")
    (repo / "swarmforge" / "swarmforge.toml").write_text("[roles.coder]\ngive_up_after = 3\n")
    assert sf("up", "--stagger", "0", cwd=repo).returncode == 0
    try:

        def state() -> dict[str, object]:
            shown: dict[str, object] = _status(repo)["roles"][0]["agent_state"]  # type: ignore[index]
            return shown

        retry_until(lambda: "3 times in a row" in str(state().get("reason")), timeout=30)
        assert state()["state"] == "exited"
        assert str(state()["reason"]).endswith("its screen last showed: cannot reach the model")
        time.sleep(3)  # longer than the next restart's pause would be
        assert (repo / "lives").read_text() == "3\n"
        assert _process(repo)["restart_at"] is None
        # `up` starts it again.
        assert sf("up", "--stagger", "0", cwd=repo).returncode == 0
        retry_until(lambda: (repo / "lives").read_text() == "4\n")
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_up_that_fails_half_way_stops_what_it_started(repo: Path) -> None:
    make_swarm(
        repo,
        "window coder exec coder task true\nwindow qa no-such-agent-here qa\n",
        prompts={"qa": "Test.\n"},
    )
    r = sf("up", "--stagger", "0", cwd=repo)
    assert r.returncode == 1
    assert "'no-such-agent-here' is required by role 'qa'" in r.stderr
    assert "stopping what was started" in r.stderr
    assert running_pid(Paths(str(repo))) is None
    record = sessionrecord.load(str(repo))
    assert record is not None and record.state == "stopped"
    nothing_left(repo)


def test_a_bad_settings_file_stops_up_naming_the_key(repo: Path) -> None:
    _swarm(repo, '[roles.coder]\nrestart = "always"\n')
    r = sf("up", "--stagger", "0", cwd=repo)
    assert r.returncode == 1
    assert "swarmforge.toml" in r.stderr and "roles.coder.restart" in r.stderr
    assert sessionrecord.load(str(repo)) is None


def test_settings_errors_name_the_file_and_the_key_or_line() -> None:
    with pytest.raises(CorruptFile, match="line 2"):
        parse_settings(b"[roles.coder]\nrestart = \n", "s.toml")
    with pytest.raises(CorruptFile, match=r"roles\.coder\.allow_helpers"):
        parse_settings(b"[roles.coder]\nallow_helpers = 'yes please'\n", "s.toml")
    with pytest.raises(CorruptFile, match=r"roles\.ghost: no role 'ghost'"):
        parse_settings(b"[roles.ghost]\n", "s.toml", ("coder",))
    with pytest.raises(CorruptFile, match="colour"):
        parse_settings(b"[roles.coder]\ncolour = 'red'\n", "s.toml")
    parsed = parse_settings(b'[roles.coder]\nrestart = "never"\n', "s.toml", ("coder", "qa"))
    assert parsed.role("coder").restart == "never" and parsed.role("qa").restart == "on-failure"
    assert parsed.role("qa").allow_helpers is True


def test_env_and_pass_env_take_variable_names_and_leave_swarmforge_s_own_alone() -> None:
    for toml, said in (
        (
            b"[roles.coder]\nenv = { 'A-B' = '1' }\n",
            r"roles\.coder\.env.*\"A-B\" is not a variable",
        ),
        (b"[roles.coder]\nenv = { PATH = '/x' }\n", "PATH is set by swarmforge"),
        (b"[roles.coder]\nenv = { SWARMFORGE_ROLE = 'x' }\n", "SWARMFORGE_ROLE is set by"),
        (b"[roles.coder]\npass_env = ['*']\n", r"roles\.coder\.pass_env.*prefix ending in \*"),
        (b"[roles.coder]\npass_env = 'AWS_*'\n", r"roles\.coder\.pass_env"),
    ):
        with pytest.raises(CorruptFile, match=said):
            parse_settings(toml, "s.toml")
    parsed = parse_settings(b"[roles.coder]\nenv = { A = '1' }\npass_env = ['AWS_*', 'B']\n", "s")
    assert parsed.role("coder").env == {"A": "1"}
    assert parsed.role("coder").pass_env == ["AWS_*", "B"]


def test_no_settings_file_means_the_defaults(tmp_path: Path) -> None:
    assert load_settings(str(tmp_path)).role("anyone").restart == "on-failure"


def test_restart_pauses_grow_and_stop_at_the_ceiling() -> None:
    assert lifecycle.restart_pause("on-failure", 1, 0) == 1.0
    assert lifecycle.restart_pause("on-failure", 137, 3) == 8.0
    assert lifecycle.restart_pause("on-failure", 1, 20) == lifecycle.MAX_BACKOFF
    assert lifecycle.restart_pause("on-failure", 0, 0) is None
    assert lifecycle.restart_pause("never", 1, 0) is None
    assert shell_status(-9) == 137 and shell_status(2) == 2


@pytest.mark.slow
def test_an_agent_that_can_no_longer_start_is_shown_with_exit_127(repo: Path) -> None:
    make_swarm(
        repo, "window coder ./agent.sh master\n", {"agent.sh": "#!/bin/sh\nrm agent.sh\nexit 3\n"}
    )
    (repo / "swarmforge" / "roles" / "coder.prompt").write_text("Code.\n")
    # Restarted however often it fails at once (a loaded machine may look late).
    (repo / "swarmforge" / "swarmforge.toml").write_text("[roles.coder]\ngive_up_after = 1000\n")
    assert sf("up", "--stagger", "0", cwd=repo).returncode == 0
    try:
        retry_until(lambda: _process(repo).get("exit_code") == 127, timeout=20)
        process = _process(repo)
        assert process["state"] == "exited" and process["restart_at"]
        assert any("cannot start ./agent.sh" in line for line in process["last_lines"])  # type: ignore[attr-defined]
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_up_refuses_a_worktree_role_whose_instructions_are_not_committed(
    repo: Path, tmp_path: Path
) -> None:
    from tests.support import fake_agent

    tools = fake_agent(tmp_path / "tools", "fakeagent")
    scaffolded = sf("init", ".", cwd=repo)  # the project has history: nothing commits
    assert "git add swarmforge && git commit" in scaffolded.stdout
    (repo / "swarmforge" / "swarmforge.conf").write_text(
        "window coder fakeagent master\nwindow cleaner fakeagent cleaner batch\n"
    )
    before = git(repo, "status", "--porcelain")
    r = sf("up", "--stagger", "0", cwd=repo, path_extra=f"{tools}:")
    assert r.returncode == 1
    assert "cleaner: swarmforge/constitution.prompt" in r.stderr
    assert "swarmforge/roles/cleaner.prompt" in r.stderr
    assert "git add swarmforge && git commit" in r.stderr
    assert not (repo / ".worktrees").exists() and sessionrecord.load(str(repo)) is None
    assert running_pid(Paths(str(repo))) is None
    assert git(repo, "status", "--porcelain") == before
    git(repo, "add", "swarmforge")
    git(repo, "commit", "-q", "-m", "Add the swarm configuration")
    r = sf("up", "--stagger", "0", cwd=repo, path_extra=f"{tools}:")
    try:
        assert r.returncode == 0, r.stderr
        cleaner = repo / ".worktrees" / "cleaner" / "swarmforge"
        assert (cleaner / "roles" / "cleaner.prompt").is_file()
        assert (cleaner / "constitution" / "articles").is_dir()
        # up wrote nothing there; the fake coder, once it starts, writes its own files.
        shown = git(repo, "status", "--porcelain").splitlines()
        assert [line for line in shown if "agent-" not in line] == []
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_each_agent_gets_the_variables_its_own_cli_reads_and_no_other_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swarmforge.agents.environment import agent_env
    from swarmforge.config.rolerecord import RoleRecord
    from swarmforge.config.settings import RoleSettings

    for name, value in {
        "ANTHROPIC_API_KEY": "a",
        "OPENAI_API_KEY": "o",
        "GITHUB_TOKEN": "g",
        "AWS_ACCESS_KEY_ID": "k",
    }.items():
        monkeypatch.setenv(name, value)

    def env_of(agent: str, settings: RoleSettings | None = None) -> set[str]:
        role = RoleRecord(
            name="r", agent=agent, worktree="r", path=str(tmp_path), branch="b", port=4000
        )
        return set(agent_env(str(tmp_path), "run", role, settings or RoleSettings()))

    secrets = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_ACCESS_KEY_ID"}
    assert env_of("claude") & secrets == {"ANTHROPIC_API_KEY"}
    assert env_of("codex") & secrets == {"OPENAI_API_KEY"}
    assert env_of("copilot") & secrets == {"GITHUB_TOKEN"}
    assert env_of("aider") & secrets == set()
    given = RoleSettings(pass_env=["AWS_*"])
    assert env_of("aider", given) & secrets == {"AWS_ACCESS_KEY_ID"}
