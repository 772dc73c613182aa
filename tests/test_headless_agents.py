"""Headless agent roles: what runs them, the per-item loop's outcome rules, the real CLIs."""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from swarmforge import tagging
from swarmforge.agents.agent import Invocation, Launch, headless_prompt
from swarmforge.agents.claude.command import launch_settings
from swarmforge.agents.codex.command import CODEX_REPORTS
from swarmforge.agents.codex.sandbox import link_helper, sandbox_args
from swarmforge.config import prompts, sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.roster import SwarmConfig
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.daemon.dispatcher import Dispatcher
from swarmforge.daemon.wake import Waker
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import fromuser, message
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.swarm import placement, rolecommand
from swarmforge.swarm.execrole.itemcommand import item_command
from swarmforge.swarm.execrole.loop import RETRIES, ExecRole
from swarmforge.tempdirs import temp_dir
from tests.realagents import require_cli
from tests.support import BIN, VENV_BIN, Project, make_swarm

CONF = (
    "window coder claude coder --model sonnet\n"
    "window fixer codex fixer -m o3\n"
    "window pilot copilot pilot\n"
    "window tests exec tests batch ./check.sh\n"
)
LOG = logging.getLogger("test-headless-agents")


class Swarm:
    """A configured project, its planned role records and a PATH holding its agents."""

    def __init__(self, root: Path, tools: Path) -> None:
        self.root = str(root)
        self.config: SwarmConfig = load_config(self.root)
        self.records = {r.name: r for r in placement.plan(self.root, self.config, "run1")}
        self.env = {"PATH": str(tools)}

    def command(self, name: str, backend: str | None = None) -> list[str]:
        return rolecommand.command(self.root, self.config, self.records[name], self.env, backend)

    def loop(self, name: str) -> list[str]:
        return [sys.executable, "-m", "swarmforge", "role-loop", "--project", self.root, name]


@pytest.fixture
def swarm(repo: Path, tmp_path: Path) -> Swarm:
    make_swarm(repo, CONF)
    for name in ("coder", "fixer", "pilot"):
        (repo / "swarmforge" / "roles" / f"{name}.prompt").write_text(f"You are {name}.\n")
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("claude", "codex", "copilot"):
        # Only looked up on PATH here, never run.
        (tools / name).write_text("#!/bin/sh\nexit 99\n")
        (tools / name).chmod(0o755)
    return Swarm(repo, tools)


def claude_json(swarm: Swarm, name: str, allow_helpers: bool = True) -> str:
    """The `--settings` JSON swarmforge gives the claude of role `name`."""
    path, temp = swarm.records[name].path, temp_dir(swarm.root, name)
    return launch_settings(Launch(path, "", "", allow_helpers=allow_helpers, temp_dir=temp))


def test_headless_claude_and_codex_roles_run_the_loop(swarm: Swarm) -> None:
    for name in ("coder", "fixer", "tests"):
        assert swarm.command(name, "headless") == swarm.loop(name)
    # Other agents keep their interactive command line.
    pilot = swarm.command("pilot", "headless")
    assert pilot[:2] == ["copilot", "-C"] and pilot[-2] == "-i"


def test_tmux_agents_get_their_flags_for_unattended_use(swarm: Swarm) -> None:
    coder = swarm.command("coder", "tmux")
    assert coder[0] == "claude" and "-p" not in coder
    assert coder[coder.index("--settings") + 1] == claude_json(swarm, "coder")
    # In its sandbox, fitted to its worktree: commands run unasked, never outside it.
    box = json.loads(claude_json(swarm, "coder"))["sandbox"]
    assert box["enabled"] and box["autoAllowBashIfSandboxed"]
    assert box["allowUnsandboxedCommands"] is False
    assert temp_dir(swarm.root, "coder") in box["filesystem"]["allowWrite"]
    assert coder[-1] == prompts.instruction_text("coder")
    fixer = swarm.command("fixer", "tmux")
    fixer_path = swarm.records["fixer"].path
    assert fixer == [
        "codex",
        "-C",
        fixer_path,
        "-c",
        "allow_login_shell=false",
        *CODEX_REPORTS,
        *sandbox_args(fixer_path, temp_dir(swarm.root, "fixer"), ["-m", "o3"], interactive=True),
        "-m",
        "o3",
        "--",
        prompts.instruction_text("fixer"),
    ]
    # In its sandbox, without approval prompts, never with a bypass.
    assert 'default_permissions="swarmforge"' in fixer and "--sandbox" not in fixer
    assert fixer[fixer.index("--ask-for-approval") + 1] == "never"
    assert swarm.command("tests", "tmux") == swarm.loop("tests")


def test_the_backend_defaults_to_the_runs(swarm: Swarm) -> None:
    assert swarm.command("coder")[0] == "claude"  # no run yet: tmux
    record = SessionRecord(
        run_id="run1",
        project=swarm.root,
        backend="headless",
        state="running",
        started_at="2026-01-01T00:00:00Z",
        roles=list(swarm.records.values()),
    )
    Path(swarm.root, ".swarmforge").mkdir()
    sessionrecord.save(swarm.root, record)
    assert swarm.command("coder") == swarm.loop("coder")
    assert swarm.command("coder", "tmux")[0] == "claude"


def test_a_missing_agent_is_reported_when_the_role_starts(swarm: Swarm, tmp_path: Path) -> None:
    swarm.env = {"PATH": str(tmp_path / "empty")}
    with pytest.raises(SwarmforgeError, match="'claude' is required by role 'coder'"):
        swarm.command("coder", "headless")
    with pytest.raises(SwarmforgeError, match="'codex' is required by role 'fixer'"):
        swarm.command("fixer", "headless")


def test_allow_helpers_false_leaves_claude_only_its_state_hooks(swarm: Swarm) -> None:
    Path(swarm.root, "swarmforge", "swarmforge.toml").write_text(
        "[roles.coder]\nallow_helpers = false\n"
    )
    only_hooks = claude_json(swarm, "coder", allow_helpers=False)
    assert "permissions" not in json.loads(only_hooks)
    tmux = swarm.command("coder", "tmux")
    assert tmux[tmux.index("--settings") + 1] == only_hooks
    invocation = item_command(swarm.root, swarm.config, swarm.records["coder"])("TASK: x\n")
    assert invocation.argv[invocation.argv.index("--settings") + 1] == only_hooks


def test_the_loop_runs_each_item_through_the_agents_non_interactive_mode(swarm: Swarm) -> None:
    printout = "TASK: /t/x.handoff\nFROM: user\nPAYLOAD:\nwork\n"
    claude = item_command(swarm.root, swarm.config, swarm.records["coder"])(printout)
    instructions = prompts.instruction_path(swarm.root, "coder")
    launch = Launch(swarm.records["coder"].path, instructions, prompts.instruction_text("coder"))
    prompt = headless_prompt(launch, printout)
    assert prompt.startswith(prompts.instruction_text("coder")) and prompt.endswith(printout)
    assert claude == Invocation(
        [
            "claude",
            "-p",
            "--append-system-prompt-file",
            instructions,
            "--permission-mode",
            "acceptEdits",
            "--settings",
            claude_json(swarm, "coder"),
            "--model",
            "sonnet",
            "--",
            prompt,
        ],
        b"",
    )
    codex = item_command(swarm.root, swarm.config, swarm.records["fixer"])(printout)
    assert codex.argv[:4] == ["codex", "exec", "-C", swarm.records["fixer"].path]
    tests = item_command(swarm.root, swarm.config, swarm.records["tests"])(printout)
    assert tests == Invocation(["./check.sh"], printout.encode())
    with pytest.raises(SwarmforgeError, match="has no per-item loop"):
        item_command(swarm.root, swarm.config, swarm.records["pilot"])


# -- the loop's outcome rules, with a script in the agent's place (these unit tests only) --

SCRIPT = """#!/bin/sh
printf '%s\\n' "$SWARMFORGE_TASK" >> runs.txt
for last; do :; done
printf '%s' "$last" > prompt.txt
if [ -e complete-it ]; then done_with_current.sh >> done.txt || exit 9; fi
exit "$(cat exit-code 2>/dev/null || echo 0)"
"""


def _loop(project: Project, role: str, mode: str) -> ExecRole:
    script = project.root / "agent.sh"
    script.write_text(SCRIPT)
    script.chmod(0o755)

    def command(printout: str) -> Invocation:
        return Invocation([str(script), "-p", "--", f"INSTRUCTIONS\n{printout}"], b"")

    env = {"PATH": f"{BIN}:{VENV_BIN}:/usr/bin:/bin", "SWARMFORGE_ROLE": role}
    return ExecRole(role, str(project.tree(role)), mode, command, env, LOG)


def _enqueue(project: Project, role: str, n: int, priority: str = "50") -> list[str]:
    names = []
    for i in range(n):
        name = f"{priority}_20260101T00000{i}Z_00000{i + 1}_from_user_to_{role}.handoff"
        headers = {"from": "user", "to": role, "priority": priority, "type": "note"}
        project.enqueue(role, name, {**headers, "message": f"m{i}"}, f"work {i}\n")
        names.append(name)
    return names


def _completed(project: Project, role: str) -> list[message.Handoff]:
    box = project.box(role, Box.COMPLETED)
    return [message.read(str(p)) for p in sorted(box.rglob("*.handoff"))]


def test_exit_0_completes_each_item_and_the_prompt_holds_the_printout(project: Project) -> None:
    loop = _loop(project, "coder", "task")
    names = _enqueue(project, "coder", 2)
    assert loop.step() and loop.step() and not loop.step()
    done = _completed(project, "coder")
    assert [h.get("message") for h in done] == ["m0", "m1"]
    assert all(h.get("outcome") is None and h.get("completed_at") for h in done)
    prompt = (project.tree("coder") / "prompt.txt").read_text()
    in_process = project.box("coder", Box.IN_PROCESS)
    assert prompt.startswith(f"INSTRUCTIONS\nTASK: {in_process / names[1]}\nFROM: user\n")
    assert prompt.endswith("PAYLOAD:\nwork 1\n")


def test_a_failing_agent_is_retried_then_its_item_completed_as_failed(project: Project) -> None:
    loop = _loop(project, "coder", "task")
    _enqueue(project, "coder", 2)
    (project.tree("coder") / "exit-code").write_text("4\n")
    assert loop.step()
    runs = (project.tree("coder") / "runs.txt").read_text().splitlines()
    assert len(runs) == 1 + RETRIES and len(set(runs)) == 1
    (failed,) = _completed(project, "coder")
    assert (failed.get("outcome"), failed.get("exit_code")) == ("failed", "4")
    assert project.names("coder", Box.NEW) != [], "the role moves on to the next item"


def test_a_batch_runs_once_and_a_failure_marks_every_item(project: Project) -> None:
    loop = _loop(project, "qa", "batch")
    _enqueue(project, "qa", 2)
    (project.tree("qa") / "exit-code").write_text("2\n")
    assert loop.step() and not loop.step()
    assert len((project.tree("qa") / "runs.txt").read_text().splitlines()) == 1 + RETRIES
    assert [(h.get("outcome"), h.get("exit_code")) for h in _completed(project, "qa")] == [
        ("failed", "2"),
        ("failed", "2"),
    ]
    assert "BATCH: " in (project.tree("qa") / "prompt.txt").read_text()


def test_an_item_the_agent_completed_itself_is_not_completed_again(project: Project) -> None:
    loop = _loop(project, "coder", "task")
    _enqueue(project, "coder", 2)
    (project.tree("coder") / "complete-it").touch()
    # The agent's done_with_current.sh also takes the next item: the loop resumes that one.
    assert loop.step() and loop.step() and not loop.step()
    assert [h.get("message") for h in _completed(project, "coder")] == ["m0", "m1"]
    assert project.names("coder", Box.IN_PROCESS) == []
    assert len((project.tree("coder") / "runs.txt").read_text().splitlines()) == 2


def test_an_item_whose_agent_fails_while_stopping_stays_in_process(project: Project) -> None:
    loop = _loop(project, "coder", "task")
    (name,) = _enqueue(project, "coder", 1)
    (project.tree("coder") / "exit-code").write_text("143\n")
    loop.stop()
    assert loop.step()
    assert project.names("coder", Box.IN_PROCESS) == [name]
    assert message.read(str(project.box("coder", Box.IN_PROCESS) / name)).get("outcome") is None
    assert len((project.tree("coder") / "runs.txt").read_text().splitlines()) == 1


# -- the real CLIs, against a model endpoint that refuses every request --


class Refusals:
    """A loopback HTTP endpoint that records each request and refuses it (HTTP 400)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, bytes]] = []
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                requests.append((self.path, self.rfile.read(size)))
                body = json.dumps(
                    {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
                ).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def bodies(self, path: str) -> list[str]:
        """The bodies of the requests to `path` (query string ignored)."""
        return [b.decode(errors="replace") for p, b in self.requests if p.split("?")[0] == path]


@pytest.fixture
def refusals() -> Iterator[Refusals]:
    endpoint = Refusals()
    endpoint.thread.start()
    yield endpoint
    endpoint.server.shutdown()
    endpoint.server.server_close()


def _real_agent_loop(repo: Path, agent: str, env: dict[str, str], log: Path) -> ExecRole:
    make_swarm(repo, f"window coder {agent} master\n")
    (repo / "swarmforge" / "roles" / "coder.prompt").write_text("You write code.\n")
    root = str(repo)
    config = load_config(root)
    (record,) = placement.plan(root, config, "run1")
    placement.write_roles_tsv(root, config, [record])
    rolecommand.write_instructions(root, config)
    # The user's request goes the whole way: send, delivery, then the loop takes it.
    fromuser.send(root, "coder", "Add a greeting.\nSay hello in README.")
    Dispatcher(root, Waker(), LOG).run_once()
    assert len(Mailbox(root).items(Box.NEW)) == 1
    output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    loop = ExecRole(
        "coder", root, "task", item_command(root, config, record), env, LOG, output=output
    )
    return loop


def _failed_once(repo: Path, loop: ExecRole) -> None:
    try:
        assert loop.step()
    finally:
        if loop.output is not None:
            os.close(loop.output)
    (done,) = (message.read(p) for p in Mailbox(str(repo)).items(Box.COMPLETED))
    assert (done.get("outcome"), done.get("exit_code"), done.get("from")) == ("failed", "1", "user")


def _agent_env(home: Path, **extra: str) -> dict[str, str]:
    home.mkdir()
    # As `up` gives a role: codex's sandbox helper linked first on PATH (codex starts it
    # through a system bwrap as soon as a session starts).
    helpers = home.parent / "helpers"
    helpers.mkdir()
    link_helper(str(helpers), str(Path(require_cli("codex")).parent))
    path = f"{helpers}:{BIN}:{VENV_BIN}:/usr/bin:/bin"
    temp = home.parent / "tmp"  # the role's own TMPDIR, as `up` gives it
    temp.mkdir()
    env = {"PATH": path, "HOME": str(home), "TMPDIR": str(temp), "SWARMFORGE_ROLE": "coder"}
    return {**env, **extra}


@pytest.mark.slow
def test_real_claude_takes_the_headless_command_line(
    repo: Path, tmp_path: Path, refusals: Refusals
) -> None:
    require_cli("claude")
    env = _agent_env(
        tmp_path / "home",
        ANTHROPIC_BASE_URL=refusals.url,
        ANTHROPIC_API_KEY="sk-test",
        CLAUDE_CODE_MAX_RETRIES="0",
    )
    log = tmp_path / "coder.log"
    loop = _real_agent_loop(repo, "claude", env, log)
    _failed_once(repo, loop)
    asked = refusals.bodies("/v1/messages")
    assert len(asked) >= 1 + RETRIES
    request = json.loads(asked[-1])
    said = json.dumps(request["messages"])
    for text in ("Read swarmforge/roles/coder.prompt", "FROM: user", "Say hello in README."):
        assert text in said, text
    # The instruction file is appended to the system prompt.
    assert "Read swarmforge/constitution.prompt" in json.dumps(request["system"])
    written = log.read_text()
    assert "API Error: 400" in written and "unknown option" not in written


@pytest.mark.slow
def test_real_codex_takes_the_headless_command_line(
    repo: Path, tmp_path: Path, refusals: Refusals
) -> None:
    require_cli("codex")
    env = _agent_env(tmp_path / "home", CODEX_API_KEY="sk-test")
    codex_home = tmp_path / "home" / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model_provider = "refusals"\n'
        "[model_providers.refusals]\n"
        'name = "refusals"\n'
        f'base_url = "{refusals.url}/v1"\n'
        'env_key = "CODEX_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    log = tmp_path / "coder.log"
    loop = _real_agent_loop(repo, "codex", env, log)
    try:
        _failed_once(repo, loop)
    finally:
        # codex leaves the helper of its sandbox running, which the loop ends with the
        # item, and `down` if one starts later; with no swarm here, the test does.
        tagging.terminate(tagging.strays(env["TMPDIR"]))
    asked = refusals.bodies("/v1/responses")
    assert len(asked) >= 1 + RETRIES
    said = json.dumps(json.loads(asked[-1])["input"])
    for text in ("Read swarmforge/roles/coder.prompt", "FROM: user", "Say hello in README."):
        assert text in said, text
    assert "unexpected argument" not in log.read_text()
