"""What runs a role: its command line, for either backend."""

from __future__ import annotations

import os
import sys

from swarmforge import fsutil
from swarmforge.swarm import agents, prompts
from swarmforge.swarm.runrecord import RoleRecord
from swarmforge.swarm.spec import SwarmConfig


def write_instructions(root: str, config: SwarmConfig) -> None:
    """Write each agent role's opening instruction file and install missing articles."""
    prompts.install_missing_articles(root)
    for role in config.roles:
        if not role.is_exec:
            path = prompts.instruction_path(root, role.name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fsutil.atomic_write(path, prompts.instruction_text(role.name).encode(), durable=False)


def command(root: str, config: SwarmConfig, record: RoleRecord, env: dict[str, str]) -> list[str]:
    """The argv that runs role `record`: the exec loop, or its agent."""
    if record.exec_role:
        return [sys.executable, "-m", "swarmforge", "role-loop", "--project", root, record.name]
    spec = config.role(record.name)
    launch = agents.Launch(
        record.path,
        prompts.instruction_path(root, record.name),
        prompts.instruction_text(record.name),
    )
    return agents.launch_argv(spec, launch, path=env.get("PATH"))
