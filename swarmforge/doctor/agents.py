"""The agents the roles run: each can be found, and each starts unattended in the project."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from swarmforge import text
from swarmforge.agents import trust
from swarmforge.agents.claude.command import bypasses as claude_bypasses
from swarmforge.agents.codex.sandbox import BYPASS as CODEX_BYPASS
from swarmforge.agents.commands import find_executable
from swarmforge.agents.homes import trust_key
from swarmforge.config.conf import load_config
from swarmforge.config.roster import RoleSpec, SwarmConfig
from swarmforge.config.settings import SETTINGS_FILE, load_settings
from swarmforge.doctor.check import Check
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import CONFIG_FILE
from swarmforge.proc import popen, spawn


def _role_dir(root: str, role: RoleSpec) -> str:
    # Before `up` the worktree does not exist; it will be a checkout of the project.
    path = role.worktree_path(root)
    return path if Path(path).is_dir() else root


def check_agent(root: str, role: RoleSpec, path: str | None = None) -> Check:
    """The command role `role` runs (its agent, or an exec role's argv[0]) can be found."""
    command = role.extra_args[0] if role.is_exec else role.agent
    where = _role_dir(root, role)
    name = f"role {role.name}"
    found = find_executable(command, path=path, cwd=where)
    if found is not None:
        return Check(name, "ok", f"{command}: {found}")
    if role.is_exec:
        place = f"in {where}" if "/" in command else "on PATH"
        fix = f"create it (executable) or change role '{role.name}' in {CONFIG_FILE}"
        return Check(
            name, "FAIL", f"exec command '{command}' of role '{role.name}' not found {place}", fix
        )
    fix = f"install '{command}' or change the agent of role '{role.name}' in {CONFIG_FILE}"
    return Check(name, "FAIL", f"agent '{command}' of role '{role.name}' not found on PATH", fix)


def check_agent_start(root: str, agent: str, env: Mapping[str, str]) -> Check:
    """`agent` (claude or codex) can start in the project without asking anything."""
    try:
        found = trust.blockers(agent, root, env)
    except SwarmforgeError as exc:
        return Check(agent, "FAIL", exc.message, exc.hint or "set HOME")
    if found:
        fixes = dict.fromkeys(f"`{b.fix}`" for b in found)
        detail = f"would not start unattended: {'; '.join(b.problem for b in found)}"
        return Check(agent, "FAIL", detail, f"run {' then '.join(fixes)}")
    return Check(agent, "ok", f"starts unattended in {trust_key(root)}")


def _bypasses(role: RoleSpec) -> list[str]:
    if role.agent == "claude":
        return claude_bypasses(role.extra_args)
    return [arg for arg in role.extra_args if arg.split("=", 1)[0] in CODEX_BYPASS]


def check_sandboxes(root: str, config: SwarmConfig) -> list[Check]:
    """A warning for each claude or codex role that runs outside its sandbox, and for a
    claude sandbox this machine cannot start."""
    try:
        settings = load_settings(root, config.names)
    except SwarmforgeError:
        return []  # the settings' own error is said where they are checked
    found = []
    boxed_claude = False
    for role in config.roles:
        if role.agent not in ("claude", "codex"):
            continue
        name = f"role {role.name} sandbox"
        fix = f"remove it from [roles.{role.name}] in {SETTINGS_FILE}"
        bypass = _bypasses(role)
        outside = f"runs outside {role.agent}'s sandbox"
        if not settings.role(role.name).sandbox:
            found.append(Check(name, "warn", f"{outside} (sandbox = false)", fix))
        elif bypass:
            detail = f"{outside} ({bypass[0]} in {CONFIG_FILE})"
            found.append(Check(name, "warn", detail, f"remove {bypass[0]} from its line"))
        elif role.agent == "claude":
            boxed_claude = True
    if boxed_claude:
        found += check_claude_box()
    return found


def boxed_agents(root: str) -> list[str]:
    """claude and codex, each if a role of the project at `root` runs it in its sandbox."""
    try:
        config = load_config(root)
        settings = load_settings(root, config.names)
    except SwarmforgeError:
        return []  # said by the checks of the configuration
    found = {
        role.agent
        for role in config.roles
        if role.agent in ("claude", "codex")
        and settings.role(role.name).sandbox
        and not _bypasses(role)
    }
    return sorted(found)


def check_claude_box(path: str | None = None) -> list[Check]:
    """A warning if claude's sandbox cannot start here: it needs bubblewrap and socat, and
    bubblewrap needs user namespaces. Without its sandbox, claude asks before each command."""
    name = "claude sandbox"
    missing = [tool for tool in ("bwrap", "socat") if spawn.which(tool, path) is None]
    if missing:
        found = " and ".join(missing)
        detail = f"cannot start: {found} not found, so claude asks before every command"
        return [Check(name, "warn", detail, "install them: apt-get install bubblewrap socat")]
    try:
        probe = popen.output(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "true"], cwd="/")
        failed, said = probe.returncode != 0, probe.stderr.decode(errors="replace")
    except OSError as exc:
        failed, said = True, exc.strerror or str(exc)
    if failed:
        said = (said.strip().splitlines() or ["no reason given"])[0]
        detail = f"cannot start: bubblewrap fails here ({text.shown(said)})"
        fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)"
        return [Check(name, "warn", detail, fix)]
    return [Check(name, "ok", "bubblewrap and socat work: claude's commands run in its sandbox")]
