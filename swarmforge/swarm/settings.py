"""swarmforge/swarmforge.toml: what SwarmForge's swarmforge.conf has no word for.

swarmforge.conf stays exactly SwarmForge's format; this file holds the rest, per
role and for the whole swarm::

    [roles.coder]
    restart = "on-failure"   # restart an agent that exits with an error (with backoff), or "never"
    allow_helpers = true     # claude: the swarm's helper scripts run without an approval prompt

    [roles.coder.budget]
    tokens = 2_000_000       # a budget-crossed event once the role's agent has spent this many

    [budget]
    tokens = 5_000_000       # a budget-crossed event once every role together has spent this many

    [stall]
    after = "15m"            # an agent with an item in process and no activity this long is stalled

    [notify]
    command = ["swarmforge", "notify-send"]   # run with the event as JSON on stdin
    on = ["waiting", "stalled", "exited", "handoff-failed", "run-finished", "budget-crossed"]

    [bootstrap]
    copy = [".env"]          # git-ignored paths copied into each new worktree
    symlink = ["node_modules"]   # git-ignored paths linked to the main checkout's
    setup = ["npm ci --prefer-offline"]   # run in each new worktree, in order

    [start]
    max_parallel = 3         # agents starting at once
    per_minute = 6           # agent starts in any 60 seconds

The file is optional: a missing file, role or key means the default. Read with
tomllib, validated by pydantic; an error names the file, the line where TOML
says, or the key.
"""

from __future__ import annotations

import json
import os
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swarmforge.errors import CorruptFile
from swarmforge.records import parse_toml_model

SETTINGS_FILE = os.path.join("swarmforge", "swarmforge.toml")

Restart = Literal["never", "on-failure"]
DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def duration_seconds(text: str) -> float:
    """Seconds of a duration such as `15m`, `90s` or `1h30m`; ValueError naming the value."""
    match = DURATION.fullmatch(text.strip())
    if not text.strip() or match is None:
        raise ValueError(f"'{text}' is not a duration: write it like 90s, 15m or 1h30m")
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise ValueError(f"'{text}' is not a duration longer than zero")
    return float(total)


class StallSettings(BaseModel):
    """When an agent with work in hand and no activity counts as stalled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    after: str = "15m"

    @field_validator("after")
    @classmethod
    def _duration(cls, value: str) -> str:
        duration_seconds(value)
        return value

    @property
    def seconds(self) -> float:
        """The threshold in seconds."""
        return duration_seconds(self.after)


class BudgetSettings(BaseModel):
    """How many tokens a role, or the whole swarm, may spend in one run before it is
    reported (see swarmforge/swarm/budget.py); none by default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens: int | None = None

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens(cls, value: object) -> object:
        # Checked before pydantic's own coercion, which would take "5" or 5.0 for 5.
        if type(value) is not int or value <= 0:
            shown = json.dumps(value, default=str)
            raise ValueError(
                f"{shown} is not a number of tokens: write a whole number above zero, "
                "such as 2_000_000"
            )
        return value


def _inside_project(pattern: str) -> str:
    """A path pattern that stays inside the project: relative, without `..`."""
    parts = pattern.split("/")
    if not pattern.strip() or os.path.isabs(pattern) or ".." in parts:
        raise ValueError(
            f"{json.dumps(pattern)} is not a path inside the project: write it relative to "
            "the project, without '..', such as .env or config/*.local.yml"
        )
    return pattern


class BootstrapSettings(BaseModel):
    """What a role's new worktree gets before its agent starts (swarmforge/swarm/bootstrap.py).

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
        return [_inside_project(pattern) for pattern in value]

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


class NotifySettings(BaseModel):
    """A command of the user's to run on chosen events (see swarmforge/alerts.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: list[str] = []
    on: list[str] = [
        "waiting",
        "stalled",
        "exited",
        "handoff-failed",
        "run-finished",
        "budget-crossed",
    ]

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str]) -> list[str]:
        if value and not value[0].strip():
            raise ValueError("the command's first word, the program, is empty")
        return value


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


class RoleSettings(BaseModel):
    """The settings of one role."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    restart: Restart = "on-failure"
    allow_helpers: bool = True
    budget: BudgetSettings = BudgetSettings()
    bootstrap: BootstrapSettings | None = None  # only the keys given replace the project's


class Settings(BaseModel):
    """Every setting of swarmforge.toml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: dict[str, RoleSettings] = {}
    budget: BudgetSettings = BudgetSettings()
    stall: StallSettings = StallSettings()
    bootstrap: BootstrapSettings = BootstrapSettings()
    notify: NotifySettings = NotifySettings()
    start: StartSettings = StartSettings()

    def role(self, name: str) -> RoleSettings:
        """The settings of role `name` (the defaults when the file does not mention it)."""
        return self.roles.get(name) or RoleSettings()

    def role_bootstrap(self, name: str) -> BootstrapSettings:
        """Role `name`'s bootstrap: the keys its own table gives, the project's for the rest."""
        own = self.role(name).bootstrap
        if own is None:
            return self.bootstrap
        given = {key: getattr(own, key) for key in own.model_fields_set}
        return self.bootstrap.model_copy(update=given)


def settings_path(root: str) -> str:
    """Where the project at `root` keeps swarmforge.toml."""
    return os.path.join(os.path.abspath(root), SETTINGS_FILE)


def parse_settings(data: bytes, path: str, role_names: tuple[str, ...] | None = None) -> Settings:
    """Parse swarmforge.toml; CorruptFile names the file and the line or key at fault."""
    settings = parse_toml_model(data, path, Settings)
    if role_names is not None:
        for name in settings.roles:
            if name not in role_names:
                raise CorruptFile(
                    path, None, f"roles.{name}: no role '{name}' in swarmforge/swarmforge.conf"
                )
    return settings


def load_settings(root: str, role_names: tuple[str, ...] | None = None) -> Settings:
    """The project's settings; the defaults when it has no swarmforge.toml."""
    path = settings_path(root)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return Settings()
    return parse_settings(data, path, role_names)
