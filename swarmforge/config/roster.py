"""The roster of a swarm: the roles swarmforge.conf declares, as validated pydantic models,
and where a swarm's files live in the project."""

from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from swarmforge.errors import SwarmforgeError
from swarmforge.layout import WORKTREES_DIR
from swarmforge.roletable import NAME_LIMIT, QUOTES, name_too_long, role_name_problem, shown_name

SWARMFORGE_DIR = "swarmforge"
CONFIG_FILE = os.path.join(SWARMFORGE_DIR, "swarmforge.conf")
ROLES_DIR = os.path.join(SWARMFORGE_DIR, "roles")
CONSTITUTION_FILE = os.path.join(SWARMFORGE_DIR, "constitution.prompt")

MAIN_CHECKOUT = frozenset({"master", "none"})
SWARMFORGE_AGENTS = ("claude", "codex", "copilot", "grok")
EXEC = "exec"
RECEIVE_MODES = ("task", "batch")

ReceiveMode = Literal["task", "batch"]

# Characters git refuses in branch names; a worktree name becomes part of one.
_REF_UNSAFE = frozenset("~^:?*[\\")


def worktree_problem(name: str, role: str = "") -> str | None:
    """Why `name` cannot be a worktree name (of `role`, if given), or None."""
    if name in MAIN_CHECKOUT:
        return None
    invalid = f"Invalid worktree {shown_name(name)}" + (f" for role '{role}'" if role else "")
    if any(c in QUOTES for c in name):
        return f"{invalid}: worktree names cannot contain quotes or spaces"
    if (
        not name
        or "/" in name
        or name in (".", "..")
        or name.startswith(("-", "."))
        or name.endswith((".lock", "."))
        or ".." in name
        or "@{" in name
        or any(c in _REF_UNSAFE or c.isspace() or not c.isprintable() for c in name)
    ):
        return invalid
    if name_too_long(name):
        return f"{invalid}: too long, {NAME_LIMIT}"
    return None


def display_name(role: str) -> str:
    """The role's display name as SwarmForge derives it (`code-reviewer` -> `Code Reviewer`)."""
    return " ".join(w.capitalize() for w in re.sub(r"[-_]", " ", role).split())


class RoleSpec(BaseModel):
    """One role declared by a window line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    agent: str
    worktree: str
    mode: ReceiveMode = "task"
    extra_args: tuple[str, ...] = ()
    visible: bool = True
    line: int | None = None

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        problem = role_name_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("worktree")
    @classmethod
    def _check_worktree(cls, value: str, info: ValidationInfo) -> str:
        problem = worktree_problem(value, info.data.get("name", "?"))
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("agent")
    @classmethod
    def _check_agent(cls, value: str) -> str:
        if not value or any(c.isspace() or not c.isprintable() for c in value):
            raise ValueError(f"Invalid agent '{value}'")
        if any(c in QUOTES for c in value):
            # The line is split on whitespace before anything else: quotes group nothing here.
            looks = " looks empty" if not value.strip("".join(QUOTES)) else ""
            raise ValueError(f"agent '{value}'{looks}: agent names cannot contain quotes or spaces")
        # SwarmForge lower-cases the agent; other commands keep their spelling.
        lowered = value.lower()
        return lowered if lowered in (*SWARMFORGE_AGENTS, EXEC) else value

    @model_validator(mode="after")
    def _exec_needs_command(self) -> RoleSpec:
        if self.agent == EXEC and not self.extra_args:
            raise ValueError(
                f"exec role '{self.name}' needs a command: "
                "window <role> exec <worktree> [task|batch] <command> [args...]"
            )
        return self

    @property
    def is_exec(self) -> bool:
        """True for a headless command role (`exec`)."""
        return self.agent == EXEC

    @property
    def in_main_checkout(self) -> bool:
        """True when the role works in the main checkout (`master` or `none`)."""
        return self.worktree in MAIN_CHECKOUT

    @property
    def display_name(self) -> str:
        """The role's display name, as SwarmForge shows it."""
        return display_name(self.name)

    @property
    def session_name(self) -> str:
        """The role's tmux session name, as SwarmForge names it."""
        return f"swarmforge-{self.name}"

    def worktree_path(self, project_root: str) -> str:
        """Absolute path of the directory the role works in."""
        root = os.path.abspath(project_root)
        if self.in_main_checkout:
            return root
        return os.path.join(root, WORKTREES_DIR, self.worktree)


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
