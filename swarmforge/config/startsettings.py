"""`[start]` and `[bootstrap]` of swarmforge.toml: how fast agents start, and what a
role's new worktree gets before its agent does."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swarmforge.config.fields import duration_seconds, inside_project


class StartSettings(BaseModel):
    """How fast `up` starts the agents (see swarmforge/swarm/ramp.py), so that a large
    swarm does not hit the model provider with every agent's start-up in one second.

    The defaults let a swarm of up to four agents start all at once, never slower than
    the tmux sessions' own stagger, and hold a larger one to twelve starts a minute,
    which a provider's logins and rate limits take without trouble.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_parallel: int = 4  # agents starting at once
    per_minute: int = 12  # agent starts in any 60 seconds

    @field_validator("max_parallel", "per_minute", mode="before")
    @classmethod
    def _positive(cls, value: object) -> object:
        # Checked before pydantic's own coercion, which would take "3", 3.0 or true.
        if type(value) is not int or value <= 0:
            shown = json.dumps(value, default=str)
            raise ValueError(f"{shown} is not a count: write a whole number above zero, such as 3")
        return value


class BootstrapSettings(BaseModel):
    """What a role's new worktree gets before its agent starts (swarmforge/swarm/bootstrap/).

    A worktree is a fresh checkout: it lacks the git-ignored files the project needs to
    build or run (`.env`, `node_modules`), so an agent's first command would fail.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    # `copy` is BaseModel's own method: the attribute has another name.
    copy_paths: list[str] = Field(default=[], alias="copy")  # copied from the main checkout
    symlink: list[str] = []  # linked to the main checkout's copy
    setup: list[str] = []  # shell commands run in the new worktree, in order
    setup_timeout: str = "10m"

    @field_validator("copy_paths", "symlink")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        return [inside_project(pattern) for pattern in value]

    @property
    def wanted(self) -> bool:
        """True if a new worktree gets anything at all."""
        return bool(self.copy_paths or self.symlink or self.setup)

    @field_validator("setup")
    @classmethod
    def _commands(cls, value: list[str]) -> list[str]:
        if any(not command.strip() for command in value):
            raise ValueError("a setup command is empty")
        return value

    @field_validator("setup_timeout")
    @classmethod
    def _duration(cls, value: str) -> str:
        duration_seconds(value)
        return value

    @property
    def timeout_seconds(self) -> float:
        """How long one setup command may run."""
        return duration_seconds(self.setup_timeout)
