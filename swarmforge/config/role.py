"""A role of a swarm: the one model of its facts (`Role`), and the checks of its names.

A role's facts live in `Role`: its name, its agent, the worktree it works in and how
it receives work; its display name, tmux session and directory follow from them. The
other shapes of a role are this model with more, or a view of it:

- `RoleSpec` (`config/roster.py`): a role as its swarmforge.conf line declares it,
  with the agent's extra arguments and the line's number;
- `RoleRecord` (`config/rolerecord.py`): a role as a session placed it, with its
  branch, port and process, in `.swarmforge/run.json`;
- `RoleEntry` (`roletable.py`): a role's row of `roles.tsv`, the table the helper
  scripts read without pydantic; built only by `Role.entry`;
- `RoleSettings` (`config/settings.py`): the role's table in swarmforge.toml, kept
  apart because the file is optional, and reached by name with `Settings.role`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from swarmforge.layout import WORKTREES_DIR
from swarmforge.rolenames import NAME_LIMIT, QUOTES, name_too_long, role_name_problem, shown_name
from swarmforge.roletable import RoleEntry

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


class Role(BaseModel):
    """One role's facts: name, agent, worktree and receive mode, checked when made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    agent: str
    worktree: str
    mode: ReceiveMode = "task"

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
        root = Path(os.path.abspath(project_root))  # noqa: PTH100 - ".." removed, symlinks kept
        if self.in_main_checkout:
            return str(root)
        return str(root / WORKTREES_DIR / self.worktree)

    def entry(self, path: str) -> RoleEntry:
        """The role's row of roles.tsv, working in `path`: the one place rows are made."""
        # roles.tsv is tab-separated: a display name never holds a tab.
        display = self.display_name.replace("\t", " ")
        return RoleEntry(
            [self.name, self.worktree, path, self.session_name, display, self.agent, self.mode]
        )
