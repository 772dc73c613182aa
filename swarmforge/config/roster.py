"""The roster of a swarm: the roles swarmforge.conf declares, as validated pydantic models,
and where a swarm's files live in the project."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

from swarmforge.config.role import EXEC, Role
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import CONFIG_FILE, SWARMFORGE_DIR

ROLES_DIR = Path(SWARMFORGE_DIR, "roles")
CONSTITUTION_FILE = str(Path(SWARMFORGE_DIR, "constitution.prompt"))


class RoleSpec(Role):
    """One role declared by a window line: the `Role`, with what else the line says."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    extra_args: tuple[str, ...] = ()
    visible: bool = True
    line: int | None = None

    @model_validator(mode="after")
    def _exec_needs_command(self) -> RoleSpec:
        if self.agent == EXEC and not self.extra_args:
            raise ValueError(
                f"exec role '{self.name}' needs a command: "
                "window <role> exec <worktree> [task|batch] <command> [args...]"
            )
        return self


class SwarmConfig(BaseModel):
    """Every role of a swarm, in declaration order (the first is SwarmForge's cleanup role)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = CONFIG_FILE
    roles: tuple[RoleSpec, ...]

    @model_validator(mode="after")
    def _check_roles(self) -> SwarmConfig:
        if not self.roles:
            raise ValueError("No windows defined")
        names: set[str] = set()
        trees: set[str] = set()
        for role in self.roles:
            if role.name in names:
                raise ValueError(f"Duplicate role '{role.name}'")
            if role.worktree in trees:
                raise ValueError(f"Duplicate worktree '{role.worktree}'")
            names.add(role.name)
            if not role.in_main_checkout:
                trees.add(role.worktree)
        return self

    @property
    def names(self) -> tuple[str, ...]:
        """Role names in declaration order."""
        return tuple(role.name for role in self.roles)

    def role(self, name: str) -> RoleSpec:
        """The role called `name`."""
        for role in self.roles:
            if role.name == name:
                return role
        raise SwarmforgeError(f"Unknown role: {name}")
