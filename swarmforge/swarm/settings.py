"""swarmforge/swarmforge.toml: what SwarmForge's swarmforge.conf has no word for.

swarmforge.conf stays exactly SwarmForge's format; this file holds the rest, per
role for now::

    [roles.coder]
    restart = "on-failure"   # restart an agent that exits with an error (with backoff), or "never"
    allow_helpers = true     # claude: the swarm's helper scripts run without an approval prompt

The file is optional: a missing file, role or key means the default. Read with
tomllib, validated by pydantic; an error names the file, the line where TOML
says, or the key.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict

from swarmforge.errors import CorruptFile
from swarmforge.records import parse_toml_model

SETTINGS_FILE = os.path.join("swarmforge", "swarmforge.toml")

Restart = Literal["never", "on-failure"]


class RoleSettings(BaseModel):
    """The settings of one role."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    restart: Restart = "on-failure"
    allow_helpers: bool = True


class Settings(BaseModel):
    """Every setting of swarmforge.toml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: dict[str, RoleSettings] = {}

    def role(self, name: str) -> RoleSettings:
        """The settings of role `name` (the defaults when the file does not mention it)."""
        return self.roles.get(name) or RoleSettings()


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
