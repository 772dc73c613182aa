"""Every check of `doctor`, in order, for one project."""

from __future__ import annotations

import os
from collections.abc import Mapping

from swarmforge.agents import trust
from swarmforge.doctor.agents import check_agent, check_agent_start, check_sandboxes
from swarmforge.doctor.check import Check
from swarmforge.doctor.multihost import host_checks
from swarmforge.doctor.projectfiles import check_config, check_prompts
from swarmforge.doctor.repository import check_repository, check_tracked_state
from swarmforge.doctor.runstate import check_daemon, check_held, check_ports, check_run
from swarmforge.doctor.tools import check_git, check_python, check_tmux
from swarmforge.doctor.transport import check_transport
from swarmforge.errors import SwarmforgeError
from swarmforge.roletable import read_remote


def _elsewhere(root: str) -> dict[str, str]:
    """The roles another host runs (remote.tsv), by the name of that host."""
    try:
        found = read_remote(root)
    except SwarmforgeError:
        return {}
    return {role: host or "the host started without --host" for role, host in found.items()}


def run_checks(
    root: str,
    path: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    in_project: bool = True,
) -> list[Check]:
    """Every check, in order, for the project at `root` (agents looked up on `path`, their
    own configuration found through `env`, default: this process's environment);
    `in_project` False when `root` is only where doctor was run, outside any project."""
    root = os.path.realpath(root)
    checks = [check_python(), check_git(), check_tmux()]
    config_check, config = check_config(root, in_project)
    checks.append(config_check)
    if config is not None:
        elsewhere = _elsewhere(root)
        checks += [
            check_agent(root, role, path)
            if role.name not in elsewhere
            else Check(f"role {role.name}", "ok", f"runs on {elsewhere[role.name]}: checked there")
            for role in config.roles
        ]
        seen = os.environ if env is None else env
        checks += [check_agent_start(root, a, seen) for a in trust.agents_used(config)]
        checks += check_sandboxes(root, config)
        checks.append(check_prompts(root, config))
    checks += [check_repository(root), check_tracked_state(root)]
    checks += [check_daemon(root), check_held(root), *check_run(root), check_ports(root)]
    transport = check_transport(root, env)
    if transport is not None:
        checks += [transport, *host_checks(root, env)]
    return checks
