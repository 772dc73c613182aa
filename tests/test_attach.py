"""`swarmforge attach` against a real swarm on its private tmux server, watched from a second
tmux server of the test's own (the user's terminal)."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmforge.config import sessionrecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.errors import SwarmforgeError
from swarmforge.tmux.server import Tmux, project_socket
from swarmforge.views.attach import OVERVIEW, attach_command, overview_socket, plan
from tests.support import (
    SWARMFORGE,
    VENV_BIN,
    copy_tree,
    fake_agent,
    kill_session,
    make_swarm,
    retry_until,
)
from tests.support import run_cli as sf

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PATH = f"{VENV_BIN}:/usr/bin:/bin"
ROLES = "window coder fakeagent coder\nwindow qa exec qa batch true\n"


def tmux(socket: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True)


def clients(socket: str, session: str) -> list[str]:
    listed = tmux(socket, "list-clients", "-t", f"={session}", "-F", "#{client_tty}")
    return listed.stdout.split() if listed.returncode == 0 else []


@pytest.fixture(scope="module")
def swarm(template_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One tmux swarm for the module: an agent role (coder) and an exec role (qa)."""
    tmp = tmp_path_factory.mktemp("attach")
    repo = copy_tree(template_repo, tmp / "project")
    tools = fake_agent(tmp / "tools", "fakeagent")
    make_swarm(repo, ROLES, prompts={"coder": "Code.\n"})
    up = sf("up", "--stagger", "0", cwd=repo, path_extra=f"{tools}:")
    assert up.returncode == 0, up.stderr
    try:
        yield repo
    finally:
        down = sf("down", cwd=repo)
        assert down.returncode == 0, down.stderr


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[str]:
    """The socket of the user's own tmux server; a pane that ended stays, to be read."""
    config = tmp_path / "outer.conf"
    config.write_text("set -g remain-on-exit on\n")
    socket = f"sf-test-outer-{uuid.uuid4().hex[:12]}"
    made = tmux(socket, "-f", str(config), "new-session", "-d", "-s", "user", "-x", "160")
    assert made.returncode == 0, made.stderr
    yield socket
    Tmux(socket).kill_server()


def attach_in(terminal: str, repo: Path, *args: str, inside: bool = False) -> None:
    """Run `swarmforge attach ARGS` in a new window of the user's tmux, in tmux or not."""
    env = ["env"] if inside else ["env", "-u", "TMUX"]
    command = [*env, f"PATH={PATH}", str(SWARMFORGE), "attach", *args, "--project", str(repo)]
    made = tmux(terminal, "new-window", "-t", "=user:", "-n", "run", "--", *command)
    assert made.returncode == 0, made.stderr


def alive_roles(repo: Path) -> list[bool]:
    state = json.loads(sf("status", "--json", cwd=repo).stdout)
    assert state["state"] == "running"
    return [role["alive"] for role in state["roles"]]


def test_attach_outside_tmux_becomes_a_client_of_the_role_and_detaching_leaves_it_running(
    swarm: Path, terminal: str
) -> None:
    socket = project_socket(str(swarm))
    attach_in(terminal, swarm, "coder")
    retry_until(lambda: len(clients(socket, "swarmforge-coder")) == 1)
    # What the role's pane shows reaches the user's terminal.
    tmux(socket, "send-keys", "-t", "=swarmforge-coder:", "-l", "typed-by-a-person")
    screen = lambda: tmux(terminal, "capture-pane", "-p", "-t", "=user:run").stdout  # noqa: E731
    retry_until(lambda: "typed-by-a-person" in screen())
    assert tmux(socket, "detach-client", "-s", "=swarmforge-coder").returncode == 0
    retry_until(lambda: clients(socket, "swarmforge-coder") == [])
    assert alive_roles(swarm) == [True, True]


def test_attach_inside_tmux_opens_a_window_of_the_users_tmux(swarm: Path, terminal: str) -> None:
    socket = project_socket(str(swarm))
    attach_in(terminal, swarm, "qa", inside=True)
    retry_until(lambda: len(clients(socket, "swarmforge-qa")) == 1)
    windows = tmux(terminal, "list-windows", "-t", "=user", "-F", "#{window_name}").stdout
    assert "swarmforge-qa" in windows.split()
    assert tmux(terminal, "kill-window", "-t", "=user:swarmforge-qa").returncode == 0
    retry_until(lambda: clients(socket, "swarmforge-qa") == [])


def test_attach_without_a_role_tiles_every_role_and_the_overview_ends_on_detach(
    swarm: Path, terminal: str
) -> None:
    socket, overview = project_socket(str(swarm)), Tmux(overview_socket(str(swarm)))
    attach_in(terminal, swarm)
    retry_until(lambda: len(clients(overview.socket, OVERVIEW)) == 1)
    assert overview.pane_labels(OVERVIEW) == ["coder", "qa"]
    retry_until(lambda: clients(socket, "swarmforge-coder") and clients(socket, "swarmforge-qa"))
    assert tmux(overview.socket, "detach-client", "-s", f"={OVERVIEW}").returncode == 0
    retry_until(lambda: not overview.server_running())
    retry_until(lambda: clients(socket, "swarmforge-qa") == [])
    assert alive_roles(swarm) == [True, True]


def test_print_and_json_show_the_command_and_run_nothing(swarm: Path) -> None:
    socket, overview = project_socket(str(swarm)), Tmux(overview_socket(str(swarm)))
    printed = sf("attach", "coder", "--print", cwd=swarm)
    assert printed.returncode == 0, printed.stderr
    argv = printed.stdout.split()
    assert Path(argv[0]).name == "tmux"
    assert argv[1:] == ["-L", socket, "attach-session", "-t", "=swarmforge-coder"]
    env = {"PATH": PATH, "HOME": "/nonexistent", "TMUX": "/nonexistent/sock,1,0"}
    shown = subprocess.run(
        [SWARMFORGE, "attach", "--json", "--project", str(swarm)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr
    plan = json.loads(shown.stdout)
    assert plan["in_window"] is True and plan["session"] == OVERVIEW
    assert plan["socket"] == overview.socket and plan["roles"] == ["coder", "qa"]
    assert plan["argv"][1:4] == ["new-window", "-n", OVERVIEW]
    assert plan["argv"][-len(plan["client"]) :] == plan["client"]
    # The overview is made, so that the printed command works, but nothing attached to it.
    assert clients(overview.socket, OVERVIEW) == []
    overview.kill_server()


def test_an_unknown_role_is_refused_with_the_roles(swarm: Path) -> None:
    r = sf("attach", "nope", cwd=swarm)
    assert r.returncode == 1
    assert "No role 'nope'" in r.stderr and "coder, qa" in r.stderr


def _record(repo: Path, backend: str) -> None:
    role = RoleRecord(
        name="coder",
        agent="codex",
        worktree="coder",
        path=str(repo),
        branch="swarm/r1/coder",
        port=4321,
        mode="task",
    )
    (repo / ".swarmforge").mkdir(exist_ok=True)
    sessionrecord.save(
        str(repo),
        SessionRecord.model_validate(
            {
                "run_id": "r1",
                "project": str(repo),
                "backend": backend,
                "state": "running",
                "started_at": "2026-01-01T00:00:00Z",
                "roles": [role],
            }
        ),
    )


def test_no_swarm_headless_and_no_tmux_are_explained(repo: Path) -> None:
    with pytest.raises(SwarmforgeError, match="No swarm is running"):
        plan(str(repo))
    _record(repo, "headless")
    with pytest.raises(SwarmforgeError, match="headless") as headless:
        plan(str(repo), "coder")
    assert "swarmforge events --follow" in headless.value.hint
    assert ".swarmforge/logs/coder.log" in headless.value.hint
    _record(repo, "tmux")
    with pytest.raises(SwarmforgeError, match="none of its tmux sessions"):
        plan(str(repo))  # recorded as running, but no session is left
    no_tmux = subprocess.run(
        [SWARMFORGE, "attach", "--project", str(repo)],
        env={"PATH": VENV_BIN, "HOME": "/nonexistent"},
        capture_output=True,
        text=True,
    )
    assert no_tmux.returncode == 1 and "Cannot find 'tmux'" in no_tmux.stderr


def test_attach_command_names_the_project() -> None:
    assert attach_command("/p/", "coder") == ["swarmforge", "attach", "coder", "--project", "/p"]
    assert attach_command("/p") == ["swarmforge", "attach", "--project", "/p"]


def test_a_tiled_session_labels_its_panes_and_is_made_once(tmp_path: Path) -> None:
    server = Tmux(f"sf-test-{uuid.uuid4().hex[:12]}", config="/dev/null")
    try:
        panes = [(name, ["cat"]) for name in ("a", "b", "c;")]
        assert server.start_tiled("tiles", panes) is True
        assert server.pane_labels("tiles") == ["a", "b", "c;"]
        assert server.start_tiled("tiles", panes) is False
        assert kill_session(server, "tiles") is True
        assert server.pane_labels("tiles") is None
    finally:
        server.kill_server()


@pytest.mark.slow
def test_the_overview_comes_and_goes_many_times_and_ends_with_down(
    repo: Path, tmp_path: Path, terminal: str
) -> None:
    make_swarm(repo, ROLES, prompts={"coder": "Code.\n"})
    tools = fake_agent(tmp_path / "tools", "fakeagent")
    assert sf("up", "--stagger", "0", cwd=repo, path_extra=f"{tools}:").returncode == 0
    overview = Tmux(overview_socket(str(repo)))
    try:
        for _ in range(10):
            attach_in(terminal, repo)
            retry_until(lambda: len(clients(overview.socket, OVERVIEW)) == 1)
            tmux(overview.socket, "detach-client", "-s", f"={OVERVIEW}")
            retry_until(lambda: not overview.server_running())
        assert alive_roles(repo) == [True, True]
        attach_in(terminal, repo)
        retry_until(lambda: len(clients(overview.socket, OVERVIEW)) == 1)
    finally:
        assert sf("down", cwd=repo).returncode == 0
    retry_until(lambda: not overview.server_running())
