"""What runs a role: its command line, for either backend."""

from __future__ import annotations

import os
import sys

from swarmforge import fsutil
from swarmforge.swarm import agents, prompts, runrecord
from swarmforge.swarm.runrecord import RoleRecord
from swarmforge.swarm.settings import load_settings
from swarmforge.swarm.spec import SwarmConfig


def write_instructions(root: str, config: SwarmConfig) -> None:
    """Write each agent role's opening instruction file and install missing articles."""
    prompts.install_missing_articles(root)
    for role in config.roles:
        if not role.is_exec:
            path = prompts.instruction_path(root, role.name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fsutil.atomic_write(path, prompts.instruction_text(role.name).encode(), durable=False)


def launch(root: str, config: SwarmConfig, record: RoleRecord) -> agents.Launch:
    """What the agent of role `record` is started with: worktree, instructions, settings."""
    settings = load_settings(root, config.names).role(record.name)
    return agents.Launch(
        record.path,
        prompts.instruction_path(root, record.name),
        prompts.instruction_text(record.name),
        allow_helpers=settings.allow_helpers,
    )


def run_backend(root: str) -> str:
    """The backend of the project's run (`tmux` when it has no run record)."""
    record = runrecord.load(root)
    return record.backend if record is not None else "tmux"


def command(
    root: str,
    config: SwarmConfig,
    record: RoleRecord,
    env: dict[str, str],
    backend: str | None = None,
) -> list[str]:
    """The argv that runs role `record`: its per-item loop, or its agent.

    `backend` (`tmux` or `headless`) defaults to the backend of the project's run
    record. Exec roles always run the loop; with the headless backend, claude and
    codex roles run it too, driving the agent's non-interactive mode once per item.
    """
    loop = [sys.executable, "-m", "swarmforge", "role-loop", "--project", root, record.name]
    if record.exec_role:
        return loop
    spec = config.role(record.name)
    path = env.get("PATH")
    if (backend or run_backend(root)) == "headless" and agents.loops_headless(spec):
        # A missing agent is reported when the role starts, not at its first item.
        agents.require_executable(spec.agent, role=spec.name, path=path, cwd=record.path)
        return loop
    return agents.launch_argv(spec, launch(root, config, record), path=path)
