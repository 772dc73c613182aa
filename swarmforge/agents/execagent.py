"""The `exec` agent: a role that runs a command of its own per task or batch, not an agent CLI.

An `exec` role runs its extra arguments as the command, once per task or batch,
with the ready printout on stdin (see swarm/execrole/).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.agents.agent import Agent, Invocation, Launch
from swarmforge.errors import SwarmforgeError

if TYPE_CHECKING:
    from swarmforge.config.roster import RoleSpec

# roster.EXEC, spelt again: importing roster would load pydantic into every hook call
# of every agent (`swarmforge agent-state` looks agents up in the registry).
EXEC = "exec"


def exec_argv(role: RoleSpec) -> list[str]:
    """The command an exec role runs for each task or batch it accepts."""
    if not role.is_exec:
        raise SwarmforgeError(f"Role '{role.name}' is not an exec role (agent '{role.agent}')")
    if not role.extra_args:
        # RoleSpec refuses this already; checked again because argv[0] must exist.
        raise SwarmforgeError(f"exec role '{role.name}' needs a command")
    return list(role.extra_args)


class ExecAgent(Agent):
    """`exec`: the role's extra arguments are its command, run once per item."""

    loops = True

    def __init__(self) -> None:
        super().__init__(EXEC)

    def argv(self, role: RoleSpec, launch: Launch) -> list[str]:
        return exec_argv(role)

    def invocation(self, role: RoleSpec, launch: Launch, printout: str) -> Invocation:
        return Invocation(exec_argv(role), printout.encode())
