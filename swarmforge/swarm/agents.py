"""Agent command lines: how each role is started, as argv lists (never shell strings).

SwarmForge's four agents are started exactly as its launcher starts them; the
prompt file is SwarmForge's instruction file (`.swarmforge/prompts/<role>.md`) and
its text is given as the opening message:

    claude --append-system-prompt-file <file> --permission-mode acceptEdits
           -n "SwarmForge <Display>" [extra...] <text>
    codex -C <worktree> [extra...] <text>
    copilot -C <worktree> --name "SwarmForge <Display>" [extra...] -i <text>
    grok --cwd <worktree> --permission-mode acceptEdits|bypassPermissions [extra...]
         --rules <text> --verbatim <text>

grok gets `bypassPermissions` when the extra arguments ask for full autonomy
(`--yolo`, `--always-approve` or `--permission-mode bypassPermissions`).

An `exec` role runs its extra arguments as the command, once per task or batch.
Any other agent is a command looked up on PATH and started as
`<agent> [extra...] <text>`: the prompt is its last positional argument.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from swarmforge.errors import SwarmforgeError
from swarmforge.swarm.spec import EXEC, SWARMFORGE_AGENTS, RoleSpec

AUTO_APPROVE_FLAGS = frozenset({"--yolo", "--always-approve"})


@dataclass(frozen=True)
class Launch:
    """What an agent is started with: where it works and its opening prompt."""

    worktree_path: str
    prompt_file: str
    prompt_text: str


def agent_kind(agent: str) -> str:
    """`claude`, `codex`, `copilot`, `grok`, `exec`, or `command` for any other executable."""
    return agent if agent in (*SWARMFORGE_AGENTS, EXEC) else "command"


def grok_permission_mode(extra_args: Sequence[str]) -> str:
    """The permission mode SwarmForge gives grok for these extra arguments."""
    for index, arg in enumerate(extra_args):
        if arg in AUTO_APPROVE_FLAGS:
            return "bypassPermissions"
        following = extra_args[index + 1 : index + 2]
        if arg == "--permission-mode" and list(following) == ["bypassPermissions"]:
            return "bypassPermissions"
    return "acceptEdits"


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
        *role.extra_args,
        launch.prompt_text,
    ]


def _codex(role: RoleSpec, launch: Launch) -> list[str]:
    return ["codex", "-C", launch.worktree_path, *role.extra_args, launch.prompt_text]


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
