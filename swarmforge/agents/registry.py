"""The agents swarmforge knows, by name: one lookup from an agent's name to its `Agent`."""

from __future__ import annotations

from swarmforge.agents.agent import Agent
from swarmforge.agents.claude.agent import Claude
from swarmforge.agents.codex.agent import Codex
from swarmforge.agents.copilot import Copilot
from swarmforge.agents.execagent import ExecAgent
from swarmforge.agents.grok import Grok

KNOWN: dict[str, Agent] = {a.name: a for a in (Claude(), Codex(), Copilot(), Grok(), ExecAgent())}


def agent(name: str) -> Agent:
    """The agent called `name`; one swarmforge knows nothing particular of if it is none of
    its own (a command looked up on PATH)."""
    found = KNOWN.get(name)
    return found if found is not None else Agent(name)


def headless_agents() -> tuple[str, ...]:
    """The agents with a non-interactive mode the per-item loop drives: claude, codex."""
    return tuple(name for name, a in KNOWN.items() if a.headless)


def trusting_agents() -> tuple[str, ...]:
    """The agents with a trust file swarmforge checks and edits: claude, codex."""
    return tuple(name for name, a in KNOWN.items() if a.trusts)
