"""The agents' own configuration files: what stops claude or codex from starting unattended.

Each agent's file is read, checked and edited in its own module: claude/trust.py for
claude's `.claude.json`, codex/trust.py for codex's `config.toml`. This module asks the
registry for the agent, and plans and applies `swarmforge trust` changes.

Nothing here writes unless asked (`apply`), and an edit changes only the
entries it must: the rest of the file stays byte for byte.
"""

from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from swarmforge.agents.agent import Agent
from swarmforge.agents.homes import NEW_FILE_MODE, Blocker, Env, read, trust_key
from swarmforge.agents.registry import agent as find_agent
from swarmforge.agents.registry import trusting_agents
from swarmforge.config.roster import SwarmConfig
from swarmforge.errors import SwarmforgeError
from swarmforge.filewrite import atomic_write

AGENTS = trusting_agents()  # claude, codex


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


def agents_used(config: SwarmConfig) -> tuple[str, ...]:
    """The agents of `AGENTS` that the roles of `config` run, in order of first use."""
    return tuple(dict.fromkeys(r.agent for r in config.roles if r.agent in AGENTS))


def _trusting(agent: str) -> Agent:
    """The agent called `agent`, if it keeps a trust file; else an error."""
    found = find_agent(agent)
    if not found.trusts:
        raise SwarmforgeError(f"Unknown agent '{agent}' (expected one of {', '.join(AGENTS)})")
    return found


def blockers(agent: str, project_root: str, env: Env) -> list[Blocker]:
    """What would stop `agent` from starting unattended in the project; [] when nothing."""
    return _trusting(agent).blockers(project_root, env)


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
    found = _trusting(agent)
    path = found.config_path(env)
    old = read(path)
    new = found.with_trust(path, old, key, env)
    return None if new is None else Change(agent, path, old, new, _diff(path, old, new))


def apply(change: Change) -> None:
    """Write a planned change, unless the file changed since it was planned (then refuse)."""
    # Through a symbolic link (a dotfiles manager's), to the file it names, keeping the link.
    target = Path(os.path.realpath(change.path))
    if read(target) != change.old:
        raise SwarmforgeError(
            f"{change.path} changed since the change was planned; nothing was written to it.",
            hint="Run the command again (an agent that is running may be rewriting it).",
        )
    mode = NEW_FILE_MODE if change.old is None else stat.S_IMODE(target.stat().st_mode)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(str(target), change.new, mode=mode)
    # The umask may have narrowed the mode the new file was created with.
    target.chmod(mode)
