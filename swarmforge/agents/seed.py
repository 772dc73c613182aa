"""Throw-away homes in which claude and codex start in a project without asking anything.

A rehearsal, and tests of the real agents, run them in such a home: nothing of the
user's own configuration is read or written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from swarmforge.agents.claude import trust as claude_trust
from swarmforge.agents.codex import trust as codex_trust
from swarmforge.agents.codex.trust import Provider
from swarmforge.agents.homes import NEW_FILE_MODE, trust_key
from swarmforge.errors import SwarmforgeError
from swarmforge.filewrite import atomic_write


@dataclass(frozen=True)
class SeededHome:
    """A throw-away home made by `seed_home`; `env()` points the agents at it."""

    home: str

    @property
    def claude_config(self) -> Path:
        """claude's JSON file in this home (found through HOME or CLAUDE_CONFIG_DIR)."""
        return Path(self.home, ".claude.json")

    @property
    def codex_home(self) -> Path:
        """codex's directory in this home."""
        return Path(self.home, ".codex")

    def env(self) -> dict[str, str]:
        """Variables to add to an agent's environment: they override the user's own, so an
        inherited CLAUDE_CONFIG_DIR or CODEX_HOME cannot lead an agent to the real files."""
        return {
            "HOME": self.home,
            "CLAUDE_CONFIG_DIR": self.home,
            "CODEX_HOME": str(self.codex_home),
        }


def _write_new(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path):
        raise SwarmforgeError(f"{path} exists: seed_home only makes a new, throw-away home.")
    atomic_write(str(path), data, mode=NEW_FILE_MODE)


def seed_home(
    home: str,
    project_root: str,
    *,
    api_key: str | None = None,
    codex_provider: Provider | None = None,
) -> SeededHome:
    """Make a throw-away home in which claude and codex start in `project_root` unasked.

    claude: onboarding done, the project trusted and, given `api_key` (the value it will
    see in ANTHROPIC_API_KEY), that key approved. codex: the project trusted, its managed
    daemon and update check off, and `codex_provider` as its model provider (it reads the
    key from `codex_provider.env_key`); without one but with `api_key`, codex is logged in
    with that key instead. Run the agents with `SeededHome.env()` added to their
    environment (HOME alone also works when CLAUDE_CONFIG_DIR and CODEX_HOME are unset).
    Refuses to replace a file that exists.
    """
    seeded = SeededHome(os.path.abspath(home))  # noqa: PTH100 - ".." removed, symlinks kept
    key = trust_key(project_root)
    claude = claude_trust.fresh_config(key, api_key)
    codex = codex_trust.fresh_config(key, codex_provider)
    _write_new(seeded.claude_config, claude)
    _write_new(seeded.codex_home / "config.toml", codex)
    if api_key and codex_provider is None:
        _write_new(seeded.codex_home / "auth.json", codex_trust.fresh_auth(api_key))
    return seeded
