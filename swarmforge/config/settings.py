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

    [transport]              # roles on several hosts (see swarmforge/net/); absent: one machine
    url = "nats://127.0.0.1:4222"   # or tls://...
    credentials = "nats.creds"      # optional, relative to the project
    hub = "/srv/git/project.git"    # the git repository every host reaches

    [roles.cleaner]
    host = "box-b"           # the host that runs the role; default: the one running `up`

The file is optional: a missing file, role or key means the default. Read with
tomllib, validated by pydantic; an error names the file, the line where TOML
says, or the key.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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
    reported (see swarmforge/daemon/budget.py); none by default."""

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
    """A command of the user's to run on chosen events (see swarmforge/daemon/alerts.py)."""

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


TRANSPORT_SCHEMES = ("nats", "tls")
PROJECT_NAME = re.compile(r"[A-Za-z0-9-]{1,32}")
NATS_USER_ENV = "SWARMFORGE_NATS_USER"
NATS_PASSWORD_ENV = "SWARMFORGE_NATS_PASSWORD"


class TransportSettings(BaseModel):
    """How roles on several hosts reach each other: a NATS server with JetStream.

    Without this table the swarm stays on one machine and handoffs move as files only.
    The credentials file, when given, lies inside the project; without one the user
    and password come from SWARMFORGE_NATS_USER and SWARMFORGE_NATS_PASSWORD, so that
    no secret has to be written into a file that may be committed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    credentials: str | None = None
    hub: str | None = None  # a git URL or path every host can reach
    # What names the project on the server; by default a hash of `hub` (see
    # swarmforge/net/transport.py), which every host shares while its paths differ.
    project: str | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not _is_server_url(value):
            raise ValueError(
                f"{json.dumps(value)} is not a NATS server URL: write it like "
                "nats://127.0.0.1:4222 or tls://nats.example.com:4222"
            )
        return value

    @field_validator("credentials")
    @classmethod
    def _credentials(cls, value: str | None) -> str | None:
        return None if value is None else _inside_project(value)

    @field_validator("hub")
    @classmethod
    def _hub(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or value != value.strip()):
            raise ValueError(f"{json.dumps(value)} is empty or starts or ends with a space")
        return value

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        # It becomes part of NATS subject, stream and consumer names.
        if value is not None and not PROJECT_NAME.fullmatch(value):
            raise ValueError(
                f"{json.dumps(value)} is not a project name: write 1 to 32 letters, digits "
                "or '-', such as shop-api"
            )
        return value

    @model_validator(mode="after")
    def _named(self) -> TransportSettings:
        if self.hub is None and self.project is None:
            raise ValueError(
                "set hub (the git repository every host reaches) or project: "
                "the hosts find each other's mail under it"
            )
        return self

    def credentials_path(self, root: str) -> str | None:
        """The absolute path of the credentials file of the project at `root`, if any."""
        if self.credentials is None:
            return None
        return os.path.join(os.path.abspath(root), self.credentials)

    def user_password(self, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
        """(user, password) from the environment when no credentials file is given."""
        seen = os.environ if env is None else env
        user = seen.get(NATS_USER_ENV, "")
        if self.credentials is not None or not user:
            return None
        return user, seen.get(NATS_PASSWORD_ENV, "")


def _is_server_url(value: str) -> bool:
    """True for nats://host[:port] or tls://host[:port] (a user and password may precede)."""
    try:
        parts = urlsplit(value)
        _ = parts.port  # urlsplit checks the port only when it is read
    except ValueError:
        return False
    return parts.scheme in TRANSPORT_SCHEMES and bool(parts.hostname) and not parts.query


def _host_name(value: str | None) -> str | None:
    """A host name: one printable word."""
    if value is not None and (
        not value or not value.isprintable() or any(c.isspace() for c in value)
    ):
        raise ValueError(f"{json.dumps(value)} is not a host name: write one word, such as box-b")
    return value


class RoleSettings(BaseModel):
    """The settings of one role: its `[roles.NAME]` table.

    Not part of the role's model (`swarmforge/config/role.py`): swarmforge.toml is
    optional and read only where a setting is wanted, and a role reaches its table by
    its name, through `Settings.role`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    restart: Restart = "on-failure"
    allow_helpers: bool = True
    budget: BudgetSettings = BudgetSettings()
    bootstrap: BootstrapSettings | None = None  # only the keys given replace the project's
    host: str | None = None  # the host that runs the role; None: the one that runs `up`

    @field_validator("host")
    @classmethod
    def _host(cls, value: str | None) -> str | None:
        return _host_name(value)


class Settings(BaseModel):
    """Every setting of swarmforge.toml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: dict[str, RoleSettings] = {}
    budget: BudgetSettings = BudgetSettings()
    stall: StallSettings = StallSettings()
    bootstrap: BootstrapSettings = BootstrapSettings()
    notify: NotifySettings = NotifySettings()
    start: StartSettings = StartSettings()
    transport: TransportSettings | None = None  # None: one machine, files only

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
