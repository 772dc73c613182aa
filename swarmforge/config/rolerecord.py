"""Where one role of a session works: the role, placed (`RoleRecord`), and its environment.

A `RoleRecord` is a `Role` (`config/role.py`) with what placing it decided: its
directory, branch and port, and, with the headless backend, its process. It keeps no
copy of what follows from the role: `.swarmforge/run.json` still spells out the
role's tmux session and whether it is an exec role, in the same keys and order as
always, so that a record is read the same way by every version; those two keys are
written from the role and ignored when read.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from swarmforge import statedir, tagging
from swarmforge.config.role import Role
from swarmforge.layout import BIN_DIR
from swarmforge.proc import policy

# A role's keys in run.json, in the order they have always been written.
ON_DISK = (
    "name",
    "agent",
    "worktree",
    "path",
    "branch",
    "port",
    "mode",
    "session",
    "exec_role",
    "pid",
    "env",
)
DERIVED = ("session", "exec_role")  # written from the role, never read back


class RoleRecord(Role):
    """Where one role of the session works and what runs it."""

    model_config = ConfigDict(frozen=False, extra="forbid")

    path: str
    branch: str
    port: int
    pid: int | None = None  # headless backend: the role's process
    # Added to the environment of the role's processes.
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: object) -> object:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if key not in DERIVED}
        return data

    @model_serializer(mode="wrap")
    def _on_disk(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        data.update(session=self.session_name, exec_role=self.is_exec)
        return {key: data[key] for key in ON_DISK if key in data}


def role_vars(root: str, run_id: str, role: RoleRecord) -> dict[str, str]:
    """The variables that set `role`'s processes apart: run tags, role, port, helpers on PATH."""
    path = role.env.get("PATH") or os.environ.get("PATH", "/usr/bin:/bin")
    return {
        **role.env,
        **tagging.tags(run_id, root),
        "SWARMFORGE_ROLE": role.name,
        "PORT": str(role.port),
        "SWARMFORGE_PORT": str(role.port),
        "PATH": f"{Path(statedir.path(root, BIN_DIR))}{os.pathsep}{path}",
    }


def role_env(root: str, run_id: str, role: RoleRecord) -> dict[str, str]:
    """The whole environment of everything started for `role`."""
    return policy.child_env(role_vars(root, run_id, role))
