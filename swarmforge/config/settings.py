"""swarmforge/swarmforge.toml: what SwarmForge's swarmforge.conf has no word for.

swarmforge.conf stays exactly SwarmForge's format; this file holds the rest, per
role and for the whole swarm::

    [roles.coder]
    restart = "on-failure"   # restart an agent that exits with an error (with backoff), or "never"
    give_up_after = 5        # ... but not after this many exits in a row within seconds of starting
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

    [captures]               # each role's work kept under refs/swarmforge/captures/
    enabled = true           # the daemon's captures, after handoffs and on the timer
    every = "60s"            # a capture while the worktree changes, at most this often; or "off"
    keep = 200               # captures kept per role (its newest always)
    keep_for = "336h"        # and for how long

    [transport]              # roles on several hosts (see swarmforge/net/); absent: one machine
    url = "nats://127.0.0.1:4222"   # or tls://...
    credentials = "nats.creds"      # optional, relative to the project
    hub = "/srv/git/project.git"    # the git repository every host reaches

    [roles.cleaner]
    host = "box-b"           # the host that runs the role; default: the one running `up`
    env = { RUST_LOG = "info" }   # set for the role's agent
    pass_env = ["AWS_PROFILE", "AWS_*"]   # passed on from the environment `up` runs in

The file is optional: a missing file, role or key means the default. Read with
tomllib, validated by pydantic; an error names the file, the line where TOML
says, or the key. This module holds the whole file and its role tables; the other
tables live with their subject: `alertsettings.py` ([stall], [budget], [notify]),
`startsettings.py` ([start], [bootstrap]), `capturesettings.py` ([captures]) and
`transportsettings.py` ([transport]).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swarmforge.config.alertsettings import BudgetSettings, NotifySettings, StallSettings
from swarmforge.config.capturesettings import CaptureSettings
from swarmforge.config.startsettings import BootstrapSettings, StartSettings
from swarmforge.config.transportsettings import TransportSettings
from swarmforge.errors import CorruptFile
from swarmforge.records import parse_toml_model

SETTINGS_FILE = str(Path("swarmforge", "swarmforge.toml"))

Restart = Literal["never", "on-failure"]


# What swarmforge sets for every role's processes: `env` may not change it.
SWARMFORGE_SETS = frozenset({"PATH", "PORT"})
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def variable_name(name: str, *, pattern: bool) -> str:
    """An environment variable's name (with `pattern`, also a prefix ending in `*`)."""
    bare = name[:-1] if pattern and name.endswith("*") and len(name) > 1 else name
    if VARIABLE.fullmatch(bare) is None:
        also = ", or a prefix ending in *, such as AWS_*" if pattern else ""
        raise ValueError(f"{json.dumps(name)} is not a variable name: write it like MY_VAR{also}")
    return name


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
    # Exits in a row, each within seconds of its start, after which it is left down.
    give_up_after: Annotated[int, Field(ge=1)] = 5
    allow_helpers: bool = True
    sandbox: bool = True  # the agent runs in its own sandbox, fitted to its worktree
    budget: BudgetSettings = BudgetSettings()
    bootstrap: BootstrapSettings | None = None  # only the keys given replace the project's
    host: str | None = None  # the host that runs the role; None: the one that runs `up`
    # The agent gets an allowlisted environment (agents/environment.py), plus these.
    env: dict[str, str] = {}
    pass_env: list[str] = []  # names, or prefixes ending in `*`, taken from `up`'s environment

    @field_validator("host")
    @classmethod
    def _host(cls, value: str | None) -> str | None:
        return _host_name(value)

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            variable_name(name, pattern=False)
            if name in SWARMFORGE_SETS or name.startswith("SWARMFORGE_"):
                raise ValueError(f"{name} is set by swarmforge for every role; it cannot be set")
        return value

    @field_validator("pass_env")
    @classmethod
    def _pass_env(cls, value: list[str]) -> list[str]:
        for name in value:
            variable_name(name, pattern=True)
        return value


class Settings(BaseModel):
    """Every setting of swarmforge.toml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: dict[str, RoleSettings] = {}
    budget: BudgetSettings = BudgetSettings()
    stall: StallSettings = StallSettings()
    bootstrap: BootstrapSettings = BootstrapSettings()
    notify: NotifySettings = NotifySettings()
    start: StartSettings = StartSettings()
    captures: CaptureSettings = CaptureSettings()
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


def settings_path(root: str | os.PathLike[str]) -> str:
    """Where the project at `root` keeps swarmforge.toml."""
    project = Path(os.path.abspath(root))  # noqa: PTH100 - ".." removed, symlinks kept
    return str(project / SETTINGS_FILE)


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
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return Settings()
    return parse_settings(data, path, role_names)
