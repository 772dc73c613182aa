"""The agents' own configuration files: what stops claude or codex from starting unattended.

Each agent's file is read, checked and edited in its own module: `claudeconf` for
claude's `.claude.json`, `codexconf` for codex's `config.toml`. This module picks the
agent, plans and applies `swarmforge trust` changes and seeds throw-away homes; it also
re-exports the agents' paths, constants and `Provider`, so callers need only this module.

Nothing here writes unless asked (`apply`, `seed_home`), and an edit changes only the
entries it must: the rest of the file stays byte for byte.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass

from swarmforge.agents import claude as claudeconf
from swarmforge.agents import codex as codexconf
from swarmforge.agents.claude import KEY_SUFFIX, claude_config_path
from swarmforge.agents.codex import LOCAL_PROVIDERS, Provider, codex_config_path, codex_home
from swarmforge.agents.homes import Blocker, Env, home_dir, read, trust_key
from swarmforge.config.roster import SwarmConfig
from swarmforge.errors import SwarmforgeError
from swarmforge.fsutil import atomic_write

__all__ = [
    "AGENTS",
    "KEY_SUFFIX",
    "LOCAL_PROVIDERS",
    "NEW_FILE_MODE",
    "Blocker",
    "Change",
    "Env",
    "Provider",
    "SeededHome",
    "agents_used",
    "apply",
    "blockers",
    "claude_config_path",
    "codex_config_path",
    "codex_home",
    "home_dir",
    "plan_trust",
    "seed_home",
    "trust_key",
]

AGENTS = ("claude", "codex")
NEW_FILE_MODE = 0o600  # what both agents give the files they create


@dataclass(frozen=True)
class Change:
    """A planned edit of one agent file: its bytes before (None: no file yet) and after."""

    agent: str
    path: str
    old: bytes | None
    new: bytes
    diff: str

    @property
    def created(self) -> bool:
        """True when the file does not exist yet."""
        return self.old is None


@dataclass(frozen=True)
class SeededHome:
    """A throw-away home made by `seed_home`; `env()` points the agents at it."""

    home: str

    @property
    def claude_config(self) -> str:
        """claude's JSON file in this home (found through HOME or CLAUDE_CONFIG_DIR)."""
        return os.path.join(self.home, ".claude.json")

    @property
    def codex_home(self) -> str:
        """codex's directory in this home."""
        return os.path.join(self.home, ".codex")

    def env(self) -> dict[str, str]:
        """Variables to add to an agent's environment: they override the user's own, so an
        inherited CLAUDE_CONFIG_DIR or CODEX_HOME cannot lead an agent to the real files."""
        return {"HOME": self.home, "CLAUDE_CONFIG_DIR": self.home, "CODEX_HOME": self.codex_home}


def agents_used(config: SwarmConfig) -> tuple[str, ...]:
    """The agents of `AGENTS` that the roles of `config` run, in order of first use."""
    return tuple(dict.fromkeys(r.agent for r in config.roles if r.agent in AGENTS))


def _unknown(agent: str) -> SwarmforgeError:
    return SwarmforgeError(f"Unknown agent '{agent}' (expected one of {', '.join(AGENTS)})")


def blockers(agent: str, project_root: str, env: Env) -> list[Blocker]:
    """What would stop `agent` from starting unattended in the project; [] when nothing."""
    if agent == "claude":
        return claudeconf.blockers(project_root, env)
    if agent == "codex":
        return codexconf.blockers(project_root, env)
    raise _unknown(agent)


def _diff(path: str, old: bytes | None, new: bytes) -> str:
    before = old.decode("utf-8").splitlines() if old is not None else []
    lines = difflib.unified_diff(
        before,
        new.decode("utf-8").splitlines(),
        "/dev/null" if old is None else path,
        path,
        lineterm="",
    )
    return "\n".join(lines) + "\n"


def plan_trust(agent: str, project_root: str, env: Env) -> Change | None:
    """The edit that makes `agent` trust the project (claude: and approve ANTHROPIC_API_KEY)."""
    key = trust_key(project_root)
    if agent == "claude":
        path = claude_config_path(env)
        old = read(path)
        new = claudeconf.with_trust(path, old, key, env.get("ANTHROPIC_API_KEY", ""))
    elif agent == "codex":
        path = codex_config_path(env)
        old = read(path)
        new = codexconf.with_trust(path, old, key)
    else:
        raise _unknown(agent)
    return None if new is None else Change(agent, path, old, new, _diff(path, old, new))


def apply(change: Change) -> None:
    """Write a planned change, unless the file changed since it was planned (then refuse)."""
    # Through a symbolic link (a dotfiles manager's), to the file it names, keeping the link.
    target = os.path.realpath(change.path)
    if read(target) != change.old:
        raise SwarmforgeError(
            f"{change.path} changed since the change was planned; nothing was written to it.",
            hint="Run the command again (an agent that is running may be rewriting it).",
        )
    mode = NEW_FILE_MODE if change.old is None else stat.S_IMODE(os.stat(target).st_mode)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    atomic_write(target, change.new, mode=mode)
    # The umask may have narrowed the mode the new file was created with.
    os.chmod(target, mode)


def _write_new(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        raise SwarmforgeError(f"{path} exists: seed_home only makes a new, throw-away home.")
    atomic_write(path, data, mode=NEW_FILE_MODE)


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
    seeded = SeededHome(os.path.abspath(home))
    key = trust_key(project_root)
    claude = claudeconf.fresh_config(key, api_key)
    codex = codexconf.fresh_config(key, codex_provider)
    _write_new(seeded.claude_config, claude)
    _write_new(os.path.join(seeded.codex_home, "config.toml"), codex)
    if api_key and codex_provider is None:
        _write_new(os.path.join(seeded.codex_home, "auth.json"), codexconf.fresh_auth(api_key))
    return seeded
