"""Agent command lines: how each role is started, as argv lists (never shell strings).

Each agent's own command lines are its `Agent`'s (claude/command.py,
codex/command.py, copilot.py, grok.py, execagent.py; agent.py for any other); this
module asks the registry for the role's agent and checks that its command exists.
"""

from __future__ import annotations

import os
import shutil

from swarmforge.agents.agent import Agent, Invocation, Launch
from swarmforge.agents.registry import agent, headless_agents
from swarmforge.config.roster import RoleSpec
from swarmforge.errors import SwarmforgeError


def agent_argv(role: RoleSpec, launch: Launch) -> list[str]:
    """The argv that starts the interactive agent of `role` (not for exec roles)."""
    if role.is_exec:
        raise SwarmforgeError(f"Role '{role.name}' is an exec role: it runs a command per task")
    return agent(role.agent).argv(role, launch)


def loops_headless(role: RoleSpec) -> bool:
    """True if, with the headless backend, `role` runs the per-item loop (exec, claude, codex)."""
    return agent(role.agent).loops


def _no_headless_mode(role: RoleSpec) -> SwarmforgeError:
    return SwarmforgeError(
        f"Role '{role.name}' has no headless mode: agent '{role.agent}' is interactive",
        hint=f"Headless loops run exec roles and {' and '.join(headless_agents())} agents.",
    )


def headless_argv(role: RoleSpec, launch: Launch, prompt: str | None) -> list[str]:
    """The argv of the non-interactive agent of `role`; a None `prompt` is read from stdin."""
    found = agent(role.agent)
    if not found.headless:
        raise _no_headless_mode(role)
    return found.headless_argv(role, launch, prompt)


def item_invocation(role: RoleSpec, launch: Launch, printout: str) -> Invocation:
    """How `role` is run for one task or batch whose ready printout is `printout`."""
    found: Agent = agent(role.agent)
    if not found.loops:
        raise _no_headless_mode(role)
    return found.invocation(role, launch, printout)


def role_argv(role: RoleSpec, launch: Launch) -> list[str]:
    """The argv of `role`: its exec command, or the command line of its agent."""
    return agent(role.agent).argv(role, launch)


def find_executable(name: str, *, path: str | None, cwd: str) -> str | None:
    """The file `name` runs (PATH lookup; a name with '/' is taken relative to `cwd`)."""
    if "/" in name:
        candidate = os.path.join(cwd, name)  # noqa: PTH118 - Path drops a "./" (doctor shows it), a final "/"
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):  # noqa: PTH113 - False where Path.is_file() raises (EACCES)
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
