"""What a role's agent spent since the run started, from the agent's own session files."""

from __future__ import annotations

from swarmforge import times
from swarmforge.agents.registry import agent
from swarmforge.agents.tokens import Tokens
from swarmforge.config import rolerecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord


def run_since(record: SessionRecord) -> float | None:
    """When the run started, as a Unix time; None if its record does not say clearly."""
    try:
        return times.parse(record.started_at)
    except ValueError:
        return None


def role_spent(root: str, record: SessionRecord, role: RoleRecord) -> Tokens | None:
    """What the role's agent spent since the run started, from its own session files, as
    `status` shows it and budgets count it; None when that cannot be known."""
    since = run_since(record)
    if since is None:
        return None
    env = rolerecord.role_env(root, record.run_id, role)
    return agent(role.agent).tokens(env, role.path, since)
