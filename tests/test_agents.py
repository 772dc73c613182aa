"""Agent command lines: SwarmForge's four agents, exec roles and any other command."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from swarmforge.agents import commands
from swarmforge.agents.agent import HEADLESS_NOTE, MAX_PROMPT_ARG, Launch
from swarmforge.agents.claude.command import claude_settings, helper_settings, launch_settings
from swarmforge.agents.claude.hooks import CLAUDE_HOOKS
from swarmforge.agents.codex.command import CODEX_REPORTS
from swarmforge.agents.codex.sandbox import sandbox_args
from swarmforge.agents.commands import agent_argv, launch_argv, role_argv
from swarmforge.agents.execagent import exec_argv
from swarmforge.config.conf import parse_config
from swarmforge.config.roster import RoleSpec
from swarmforge.errors import SwarmforgeError

TREE = "/work/project/.worktrees/coder"
PROMPT_FILE = "/work/project/.swarmforge/prompts/coder.md"
TEXT = "Read swarmforge/constitution.prompt ...\nRead swarmforge/roles/coder.prompt ...\n"
LAUNCH = Launch(worktree_path=TREE, prompt_file=PROMPT_FILE, prompt_text=TEXT)
NO_HELPERS = Launch(TREE, PROMPT_FILE, TEXT, allow_helpers=False)
HELPERS_JSON = (
    '{"permissions": {"allow": ["Bash(swarm_handoff.sh:*)", "Bash(ready_for_next.sh:*)", '
    '"Bash(ready_for_next_task.sh:*)", "Bash(ready_for_next_batch.sh:*)", '
    '"Bash(done_with_current.sh:*)", "Bash(done_with_current_task.sh:*)", '
    '"Bash(done_with_current_batch.sh:*)"]}}'
)


def role(line: str) -> RoleSpec:
    return parse_config(line + "\n").roles[0]


def test_claude_is_started_as_swarmforge_starts_it_with_the_helpers_allowed() -> None:
    argv = agent_argv(role('window coder claude coder --model "opus 4"'), LAUNCH)
    assert argv == [
        "claude",
        "--append-system-prompt-file",
        PROMPT_FILE,
        "--permission-mode",
        "acceptEdits",
        "-n",
        "SwarmForge Coder",
        "--settings",
        launch_settings(LAUNCH),
        "--model",
        "opus 4",
        "--",
        TEXT,
    ]


def test_claude_without_allow_helpers_gets_only_its_state_hooks() -> None:
    argv = agent_argv(role("window coder claude coder"), NO_HELPERS)
    settings = json.loads(argv[argv.index("--settings") + 1])
    assert "permissions" not in settings and set(settings["hooks"]) == set(CLAUDE_HOOKS)
    assert argv[-2:] == ["--", TEXT]
    hooks = json.loads(claude_settings(True))["hooks"]["Stop"][0]["hooks"]
    assert hooks == [{"type": "command", "command": "swarmforge agent-state --agent claude"}]


def test_the_helper_settings_allow_exactly_the_helper_scripts() -> None:
    from swarmforge.layout import SCRIPTS

    assert helper_settings() == HELPERS_JSON
    allowed = json.loads(helper_settings())["permissions"]["allow"]
    assert allowed == [f"Bash({name}:*)" for name in SCRIPTS]


def test_codex_is_started_as_swarmforge_starts_it_without_a_login_shell() -> None:
    shell = ["-c", "allow_login_shell=false", *CODEX_REPORTS]
    box = sandbox_args(TREE, "", [], interactive=True)
    assert box[:2] == ["-c", 'default_permissions="swarmforge"'] and box[-2:] == [
        "--ask-for-approval",
        "never",
    ]
    assert agent_argv(role("window coder codex coder"), LAUNCH) == [
        "codex",
        "-C",
        TREE,
        *shell,
        *box,
        "--",
        TEXT,
    ]
    # Its own choice of sandbox and approvals (here --full-auto) is kept, and nothing added.
    argv = agent_argv(role("window coder codex coder batch --full-auto -m o3"), NO_HELPERS)
    assert argv == ["codex", "-C", TREE, *shell, "--full-auto", "-m", "o3", "--", TEXT]


def test_copilot_is_started_as_swarmforge_starts_it() -> None:
    argv = agent_argv(role("window code-review copilot coder --yolo"), LAUNCH)
    assert argv == [
        "copilot",
        "-C",
        TREE,
        "--name",
        "SwarmForge Code Review",
        "--yolo",
        "-i",
        TEXT,
    ]


def test_grok_is_started_as_swarmforge_starts_it() -> None:
    argv = agent_argv(role("window coder grok coder"), LAUNCH)
    assert argv == [
        "grok",
        "--cwd",
        TREE,
        "--permission-mode",
        "acceptEdits",
        "--rules",
        TEXT,
        "--verbatim",
        TEXT,
    ]


@pytest.mark.parametrize(
    ("extra", "mode"),
    [
        ("--always-approve", "bypassPermissions"),
        ("--yolo", "bypassPermissions"),
        ("--permission-mode bypassPermissions", "bypassPermissions"),
        ("--permission-mode acceptEdits", "acceptEdits"),
        ("--model grok-4", "acceptEdits"),
        ("--yolo-not", "acceptEdits"),
    ],
)
def test_grok_bypasses_permissions_only_when_asked(extra: str, mode: str) -> None:
    spec = role(f"window coder grok coder {extra}")
    argv = agent_argv(spec, LAUNCH)
    assert argv[3:5] == ["--permission-mode", mode]
    assert argv[5 : 5 + len(spec.extra_args)] == list(spec.extra_args)
    assert argv[-4:] == ["--rules", TEXT, "--verbatim", TEXT]


def test_any_other_agent_gets_its_args_then_the_prompt() -> None:
    assert agent_argv(role("window coder aider coder --yes"), LAUNCH) == ["aider", "--yes", TEXT]


def test_exec_roles_run_their_command_and_nothing_else() -> None:
    spec = role("window tests exec tests batch python -m pytest -q")
    assert exec_argv(spec) == ["python", "-m", "pytest", "-q"]
    assert role_argv(spec, LAUNCH) == ["python", "-m", "pytest", "-q"]
    with pytest.raises(SwarmforgeError, match="is an exec role"):
        agent_argv(spec, LAUNCH)
    with pytest.raises(SwarmforgeError, match="is not an exec role"):
        exec_argv(role("window coder codex coder"))


def test_an_exec_role_without_a_command_is_refused() -> None:
    spec = RoleSpec.model_construct(name="t", agent="exec", worktree="t", extra_args=())
    with pytest.raises(SwarmforgeError, match="exec role 't' needs a command"):
        exec_argv(spec)


def test_argv_is_a_list_whose_items_are_never_reparsed() -> None:
    spec = role("window coder codex coder --note 'a; rm -rf / #'")
    argv = agent_argv(spec, Launch(TREE, PROMPT_FILE, "it's $(danger) `x`"))
    assert argv == [
        "codex",
        "-C",
        TREE,
        "-c",
        "allow_login_shell=false",
        *CODEX_REPORTS,
        *sandbox_args(TREE, "", [], interactive=True),
        "--note",
        "a; rm -rf / #",
        "--",
        "it's $(danger) `x`",
    ]


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_launch_checks_the_command_on_path(tmp_path: Path) -> None:
    tool = executable(tmp_path / "bin" / "mytool")
    launch = Launch(str(tmp_path), PROMPT_FILE, TEXT)
    spec = role("window coder mytool coder -x")
    assert launch_argv(spec, launch, path=str(tool.parent)) == ["mytool", "-x", TEXT]
    with pytest.raises(SwarmforgeError) as caught:
        launch_argv(spec, launch, path=str(tmp_path / "empty"))
    assert caught.value.message == "'mytool' is required by role 'coder' but was not found on PATH"
    assert "swarmforge.conf" in caught.value.hint


def test_launch_checks_swarmforges_agents_and_exec_commands_too(tmp_path: Path) -> None:
    launch = Launch(str(tmp_path), PROMPT_FILE, TEXT)
    with pytest.raises(SwarmforgeError, match="'claude' is required by role 'coder'"):
        launch_argv(role("window coder claude coder"), launch, path=str(tmp_path))
    with pytest.raises(SwarmforgeError, match="'no-such-runner' is required by role 't'"):
        launch_argv(role("window t exec t no-such-runner"), launch, path=str(tmp_path))


def test_a_command_with_a_slash_is_found_from_the_worktree(tmp_path: Path) -> None:
    executable(tmp_path / "scripts" / "check.sh")
    (tmp_path / "scripts" / "plain.txt").write_text("not executable\n")
    launch = Launch(str(tmp_path), PROMPT_FILE, TEXT)
    spec = role("window t exec t ./scripts/check.sh --fast")
    assert launch_argv(spec, launch, path="") == ["./scripts/check.sh", "--fast"]
    found = commands.find_executable("./scripts/check.sh", path="", cwd=str(tmp_path))
    assert found is not None and Path(found).samefile(tmp_path / "scripts" / "check.sh")
    assert commands.find_executable("scripts/plain.txt", path="", cwd=str(tmp_path)) is None


PRINTOUT = "TASK: /p/in_process/x.handoff\nFROM: user\nTYPE: note\nPRIORITY: 50\nPAYLOAD:\n-x\n"
PROMPT = f"{TEXT}\n{HEADLESS_NOTE}\n{PRINTOUT}"


def test_headless_claude_prints_and_ends_with_the_prompt_after_a_separator() -> None:
    invocation = commands.item_invocation(
        role("window coder claude coder --allowedTools Edit Read"), LAUNCH, PRINTOUT
    )
    assert invocation.argv == [
        "claude",
        "-p",
        "--append-system-prompt-file",
        PROMPT_FILE,
        "--permission-mode",
        "acceptEdits",
        "--settings",
        launch_settings(LAUNCH),
        "--allowedTools",
        "Edit",
        "Read",
        "--",
        PROMPT,
    ]
    assert invocation.stdin == b""
    quiet = commands.headless_argv(role("window coder claude coder"), NO_HELPERS, "p")
    assert quiet == [
        "claude",
        "-p",
        "--append-system-prompt-file",
        PROMPT_FILE,
        "--permission-mode",
        "acceptEdits",
        "--settings",
        launch_settings(NO_HELPERS),
        "--",
        "p",
    ]
    bare = commands.headless_argv(role("window coder claude coder"), Launch(TREE, "", TEXT), "p")
    assert bare[:2] == ["claude", "-p"] and "--append-system-prompt-file" not in bare


def test_headless_codex_runs_exec_in_its_worktree_without_a_login_shell() -> None:
    invocation = commands.item_invocation(role("window coder codex coder -m o3"), LAUNCH, PRINTOUT)
    assert invocation.argv == [
        "codex",
        "exec",
        "-C",
        TREE,
        "-c",
        "allow_login_shell=false",
        *sandbox_args(TREE, "", ["-m", "o3"], interactive=False),  # `exec` never asks
        "-m",
        "o3",
        "--",
        PROMPT,
    ]
    assert "--ask-for-approval" not in invocation.argv
    assert invocation.stdin == b""


def test_a_prompt_too_long_for_one_argument_goes_on_stdin() -> None:
    long = PRINTOUT + "x" * MAX_PROMPT_ARG
    claude = commands.item_invocation(role("window coder claude coder"), LAUNCH, long)
    assert claude.argv[-2:] == ["--settings", launch_settings(LAUNCH)]
    assert claude.stdin == f"{TEXT}\n{HEADLESS_NOTE}\n{long}".encode()
    codex = commands.item_invocation(role("window coder codex coder"), LAUNCH, long)
    assert codex.argv[-2:] == ["--", "-"] and codex.stdin == claude.stdin


def test_exec_roles_get_the_printout_on_stdin_and_other_agents_have_no_headless_mode() -> None:
    spec = role("window tests exec tests batch ./check.sh -q")
    invocation = commands.item_invocation(spec, LAUNCH, PRINTOUT)
    assert (invocation.argv, invocation.stdin) == (["./check.sh", "-q"], PRINTOUT.encode())
    looping = {a: commands.loops_headless(role(f"window c {a} c x")) for a in ("exec", "claude")}
    assert looping == {"exec": True, "claude": True}
    for agent in ("copilot", "grok", "aider"):
        spec = role(f"window coder {agent} coder")
        assert not commands.loops_headless(spec)
        with pytest.raises(SwarmforgeError, match=f"agent '{agent}' is interactive"):
            commands.item_invocation(spec, LAUNCH, PRINTOUT)
