"""What a headless role runs for one item: its exec command, or its agent's non-interactive mode."""

from __future__ import annotations

from collections.abc import Callable

from swarmforge.agents import commands
from swarmforge.agents.agent import Invocation
from swarmforge.agents.execagent import exec_argv
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.roster import SwarmConfig
from swarmforge.errors import SwarmforgeError
from swarmforge.swarm import rolecommand

# What to run for one item, given its ready printout.
ItemCommand = Callable[[str], Invocation]


def printout_on_stdin(argv: list[str]) -> ItemCommand:
    """The item command of an exec role: `argv`, reading the ready printout on stdin."""
    return lambda printout: Invocation(list(argv), printout.encode())


def item_command(root: str, config: SwarmConfig, record: RoleRecord) -> ItemCommand:
    """What role `record` runs per item: its exec command, or its agent's non-interactive mode."""
    spec = config.role(record.name)
    if spec.is_exec:
        return printout_on_stdin(exec_argv(spec))
    if not commands.loops_headless(spec):
        raise SwarmforgeError(
            f"Role '{record.name}' runs agent '{spec.agent}', which has no per-item loop.",
            hint="Only exec roles, and claude or codex roles of a headless run, run one.",
        )
    launch = rolecommand.launch(root, config, record)
    return lambda printout: commands.item_invocation(spec, launch, printout)
