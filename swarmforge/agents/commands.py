"""Agent command lines: how each role is started, as argv lists (never shell strings).

SwarmForge's four agents are started as SwarmForge's launcher starts them; the
prompt file is SwarmForge's instruction file (`.swarmforge/prompts/<role>.md`) and
its text is given as the opening message:

    claude --append-system-prompt-file <file> --permission-mode acceptEdits
           -n "SwarmForge <Display>" --settings <hooks+helpers> [extra...] -- <text>
    codex -C <worktree> -c allow_login_shell=false -c notify=[...] [extra...] -- <text>
    copilot -C <worktree> --name "SwarmForge <Display>" [extra...] -i <text>
    grok --cwd <worktree> --permission-mode acceptEdits|bypassPermissions [extra...]
         --rules <text> --verbatim <text>

The `--` before the text keeps an extra option that takes several values
(claude's `--allowedTools`, codex's `-i`) from swallowing it. Two additions run
agents unattended. claude gets `--settings '<json>'`, a JSON
object allowing exactly the swarm's helper scripts (`swarm_handoff.sh`,
`ready_for_next.sh`, ... : `{"permissions": {"allow": ["Bash(swarm_handoff.sh:*)",
...]}}`) so they run without an approval prompt, unless the role's `allow_helpers`
setting is false. codex gets `-c allow_login_shell=false`: it runs shell commands
through a login shell, and a login shell's profile may reset PATH and hide the
helpers.

Both report their state (agenthint.py): claude's `--settings` always carries
`hooks` (UserPromptSubmit, PreToolUse, PostToolUse, Notification, Stop) that run
`swarmforge agent-state --agent claude`, and an interactive codex gets
`-c notify=["swarmforge", "agent-state", "--agent", "codex"]`, which codex runs with
a JSON argument when a turn ends.

grok gets `bypassPermissions` when the extra arguments ask for full autonomy
(`--yolo`, `--always-approve` or `--permission-mode bypassPermissions`).

An `exec` role runs its extra arguments as the command, once per task or batch,
with the ready printout on stdin. With the headless backend, claude and codex
roles run the same loop (see execrole.py) with the agent's non-interactive mode,
once per task or batch; the prompt is the instruction text, a note that the item
is completed when the agent exits, then the ready printout:

    claude -p --append-system-prompt-file <file> --permission-mode acceptEdits
           --settings <hooks+helpers> [extra...] -- <prompt>
    codex exec -C <worktree> -c allow_login_shell=false [extra...] -- <prompt>

A prompt too long for one argument (Linux caps one at 128 KiB) is given on stdin
instead: claude reads it there when no prompt argument is given, codex when the
prompt argument is `-`. Otherwise stdin is empty.

Any other agent is a command looked up on PATH and started as
`<agent> [extra...] <text>`: the prompt is its last positional argument. With the
headless backend such an agent (and copilot or grok) is started the same way.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from swarmforge.agents import codex
from swarmforge.config.roster import RoleSpec
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import SCRIPTS

AUTO_APPROVE_FLAGS = frozenset({"--yolo", "--always-approve"})
HEADLESS_AGENTS = ("claude", "codex")  # the agents with a non-interactive mode the loop drives
CODEX_SHELL = ("-c", "allow_login_shell=false")
# The swarm's `swarmforge` comes first on every role's PATH (shims.py). A hook that
# fails is reported by claude and ignored; only exit status 2 would block a tool call.
STATE_CALLBACK = "swarmforge agent-state --agent claude"
CLAUDE_HOOKS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop")
# How codex tells swarmforge its state: its notify program at the end of each turn, and
# its hooks (trusted one by one, see codexconf.state_hook_args) at every step of a turn.
CODEX_REPORTS = (
    "-c",
    'notify=["swarmforge", "agent-state", "--agent", "codex"]',
    *codex.state_hook_args(),
)
# Linux refuses a single argument longer than 32 pages (MAX_ARG_STRLEN); stay well below.
MAX_PROMPT_ARG = 100_000
HEADLESS_NOTE = (
    "The swarm has accepted the work below for you: do it, then end. It is completed "
    "when you exit, so do not run ready_for_next.sh or done_with_current.sh.\n"
)


@dataclass(frozen=True)
class Launch:
    """What an agent is started with: where it works, its opening prompt, its settings."""

    worktree_path: str
    prompt_file: str
    prompt_text: str
    allow_helpers: bool = True


@dataclass(frozen=True)
class Invocation:
    """One run of a role's command for one task or batch: its argv and its stdin."""

    argv: list[str]
    stdin: bytes


def grok_permission_mode(extra_args: Sequence[str]) -> str:
    """The permission mode SwarmForge gives grok for these extra arguments."""
    for index, arg in enumerate(extra_args):
        if arg in AUTO_APPROVE_FLAGS:
            return "bypassPermissions"
        following = extra_args[index + 1 : index + 2]
        if arg == "--permission-mode" and list(following) == ["bypassPermissions"]:
            return "bypassPermissions"
    return "acceptEdits"


def helper_settings() -> str:
    """claude's `--settings` JSON allowing exactly the swarm's helper scripts."""
    allow = [f"Bash({script}:*)" for script in SCRIPTS]
    return json.dumps({"permissions": {"allow": allow}})


def state_hooks() -> dict[str, object]:
    """claude's `hooks` settings that report its state to swarmforge (see agenthint.py)."""
    hook = {"type": "command", "command": STATE_CALLBACK}
    return {event: [{"matcher": "", "hooks": [hook]}] for event in CLAUDE_HOOKS}


def claude_settings(allow_helpers: bool) -> str:
    """claude's `--settings` JSON: the state hooks, and the helpers allowed if `allow_helpers`."""
    settings: dict[str, object] = {"hooks": state_hooks()}
    if allow_helpers:
        settings = json.loads(helper_settings()) | settings
    return json.dumps(settings)


def _claude_settings(launch: Launch) -> list[str]:
    return ["--settings", claude_settings(launch.allow_helpers)]


def _title(role: RoleSpec) -> str:
    return f"SwarmForge {role.display_name}"


def _claude(role: RoleSpec, launch: Launch) -> list[str]:
    return [
        "claude",
        "--append-system-prompt-file",
        launch.prompt_file,
        "--permission-mode",
        "acceptEdits",
        "-n",
        _title(role),
        *_claude_settings(launch),
        *role.extra_args,
        "--",
        launch.prompt_text,
    ]


def _codex(role: RoleSpec, launch: Launch) -> list[str]:
    return [
        "codex",
        "-C",
        launch.worktree_path,
        *CODEX_SHELL,
        *CODEX_REPORTS,
        *role.extra_args,
        "--",
        launch.prompt_text,
    ]


def _copilot(role: RoleSpec, launch: Launch) -> list[str]:
    return [
        "copilot",
        "-C",
        launch.worktree_path,
        "--name",
        _title(role),
        *role.extra_args,
        "-i",
        launch.prompt_text,
    ]


def _grok(role: RoleSpec, launch: Launch) -> list[str]:
    return [
        "grok",
        "--cwd",
        launch.worktree_path,
        "--permission-mode",
        grok_permission_mode(role.extra_args),
        *role.extra_args,
        "--rules",
        launch.prompt_text,
        "--verbatim",
        launch.prompt_text,
    ]


_BUILDERS: dict[str, Callable[[RoleSpec, Launch], list[str]]] = {
    "claude": _claude,
    "codex": _codex,
    "copilot": _copilot,
    "grok": _grok,
}


def agent_argv(role: RoleSpec, launch: Launch) -> list[str]:
    """The argv that starts the interactive agent of `role` (not for exec roles)."""
    if role.is_exec:
        raise SwarmforgeError(f"Role '{role.name}' is an exec role: it runs a command per task")
    builder = _BUILDERS.get(role.agent)
    if builder is not None:
        return builder(role, launch)
    return [role.agent, *role.extra_args, launch.prompt_text]


def exec_argv(role: RoleSpec) -> list[str]:
    """The command an exec role runs for each task or batch it accepts."""
    if not role.is_exec:
        raise SwarmforgeError(f"Role '{role.name}' is not an exec role (agent '{role.agent}')")
    if not role.extra_args:
        # RoleSpec refuses this already; checked again because argv[0] must exist.
        raise SwarmforgeError(f"exec role '{role.name}' needs a command")
    return list(role.extra_args)


def loops_headless(role: RoleSpec) -> bool:
    """True if, with the headless backend, `role` runs the per-item loop (exec, claude, codex)."""
    return role.is_exec or role.agent in HEADLESS_AGENTS


def headless_prompt(launch: Launch, printout: str) -> str:
    """The prompt of a headless agent for one item: its instructions, then the ready printout."""
    return f"{launch.prompt_text}\n{HEADLESS_NOTE}\n{printout}"


def headless_argv(role: RoleSpec, launch: Launch, prompt: str | None) -> list[str]:
    """The argv of the non-interactive agent of `role`; a None `prompt` is read from stdin."""
    if role.agent == "claude":
        system = ["--append-system-prompt-file", launch.prompt_file] if launch.prompt_file else []
        return [
            "claude",
            "-p",
            *system,
            "--permission-mode",
            "acceptEdits",
            *_claude_settings(launch),
            *role.extra_args,
            # After `--`, a prompt is never taken for an option or an option's value.
            *(["--", prompt] if prompt is not None else []),
        ]
    if role.agent == "codex":
        return [
            "codex",
            "exec",
            "-C",
            launch.worktree_path,
            *CODEX_SHELL,
            *role.extra_args,
            "--",
            "-" if prompt is None else prompt,
        ]
    raise SwarmforgeError(
        f"Role '{role.name}' has no headless mode: agent '{role.agent}' is interactive",
        hint=f"Headless loops run exec roles and {' and '.join(HEADLESS_AGENTS)} agents.",
    )


def item_invocation(role: RoleSpec, launch: Launch, printout: str) -> Invocation:
    """How `role` is run for one task or batch whose ready printout is `printout`."""
    if role.is_exec:
        return Invocation(exec_argv(role), printout.encode())
    prompt = headless_prompt(launch, printout)
    data = prompt.encode()
    if len(data) > MAX_PROMPT_ARG:
        return Invocation(headless_argv(role, launch, None), data)
    return Invocation(headless_argv(role, launch, prompt), b"")


def role_argv(role: RoleSpec, launch: Launch) -> list[str]:
    """The argv of `role`: its exec command, or the command line of its agent."""
    return exec_argv(role) if role.is_exec else agent_argv(role, launch)


def find_executable(name: str, *, path: str | None, cwd: str) -> str | None:
    """The file `name` runs (PATH lookup; a name with '/' is taken relative to `cwd`)."""
    if "/" in name:
        candidate = os.path.join(cwd, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
        return None
    return shutil.which(name, path=path)


def require_executable(name: str, *, role: str, path: str | None, cwd: str) -> str:
    """The file `name` runs, or an error naming the missing command and its role."""
    found = find_executable(name, path=path, cwd=cwd)
    if found is None:
        raise SwarmforgeError(
            f"'{name}' is required by role '{role}' but was not found on PATH",
            hint=f"Install '{name}' or change the agent of role '{role}' in swarmforge.conf.",
        )
    return found


def launch_argv(role: RoleSpec, launch: Launch, *, path: str | None) -> list[str]:
    """The argv of `role`, after checking that its command can be found."""
    argv = role_argv(role, launch)
    require_executable(argv[0], role=role.name, path=path, cwd=launch.worktree_path)
    return argv
