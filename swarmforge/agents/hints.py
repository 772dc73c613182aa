"""What an agent's own callbacks say of it: the hint file its hooks or `notify` program write.

They run `swarmforge agent-state` (an internal subcommand) inside the role's
environment, which names the project (`SWARMFORGE_PROJECT`) and the role
(`SWARMFORGE_ROLE`). The callback writes the hint file and nothing else, quickly
and with the standard library only: it runs at every tool call of a claude
agent. Each agent's `hint` reads what its callback says (claude/hooks.py,
codex/hooks.py). A hint is evidence that state.py combines with the rest; it never
fails the agent that sent it.

Hooks (claude's; codex's when given `codex.hooks.state_hook_args`) report both sides
of a turn. codex's `notify` program reports only an end (`agent-turn-complete`, its
one payload type), and not only of the agent's turns: codex also notifies when the
side thread that titles its session ends, just after the agent's first turn has
begun. So once codex's hooks speak, its notify is ignored (the Stop hook says when
a turn ends); without hooks it is the only word codex says of itself.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge import filewrite, fsutil, statedir
from swarmforge.agents import conversation
from swarmforge.agents.codex.hooks import CODEX_NOTIFY
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import AGENTS_DIR
from swarmforge.tagging import RUN_TAG

if TYPE_CHECKING:
    from swarmforge.agents.agent import Agent

HINTS = ("working", "waiting", "idle")  # what an agent's callbacks can say of themselves
HINT_LIMIT = 64 * 1024  # a hint is a line of JSON: anything larger was not written by a callback


def hint_path(root: str, role: str) -> Path:
    """Where the last word of `role`'s agent about itself is kept."""
    return Path(statedir.path(root, AGENTS_DIR), f"{role}.hint.json")


@dataclass(frozen=True)
class Hint:
    """What an agent's own callback said last: a state, when (epoch seconds), which callback."""

    state: str
    at: float
    source: str

    @property
    def both_sides(self) -> bool:
        """Its source tells the start of a turn as well as its end (a hook, codex's terminal
        status), not only an end (codex's notify program)."""
        return self.source != CODEX_NOTIFY


def write_hint(root: str, role: str, state: str, source: str, when: float | None = None) -> None:
    """Record what `role`'s agent says of itself."""
    if state not in HINTS:
        raise SwarmforgeError(f"Unknown agent state '{state}': expected one of {', '.join(HINTS)}")
    path = hint_path(root, role)
    path.parent.mkdir(parents=True, exist_ok=True)
    at = time.time() if when is None else when
    data = json.dumps({"state": state, "at": at, "source": source})
    filewrite.atomic_write(str(path), data.encode() + b"\n", durable=False)


def read_hint(root: str, role: str) -> Hint | None:
    """The last hint of `role`, or None (none, damaged, or not a regular file: a hint is
    only evidence)."""
    try:
        raw = json.loads(fsutil.read_regular(str(hint_path(root, role)), limit=HINT_LIMIT))
        hint = Hint(str(raw["state"]), float(raw["at"]), str(raw["source"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return hint if hint.state in HINTS else None


def _superseded(root: str, role: str, source: str) -> bool:
    """True for a notify from a codex whose hooks speak (they say more, and only of its turns)."""
    if source != CODEX_NOTIFY:
        return False
    last = read_hint(root, role)
    return last is not None and last.both_sides


def record(env: dict[str, str], agent: Agent, document: str) -> bool:
    """Write the hint that `document` (a hook's input, a notify argument) gives; True if so."""
    root, role = env.get("SWARMFORGE_PROJECT"), env.get("SWARMFORGE_ROLE")
    if not root or not role:
        return False  # not started by a swarm: nothing to record
    try:
        payload = json.loads(document)
    except ValueError:
        return False
    if not isinstance(payload, dict):
        return False
    _remember(env, root, role, agent, payload)
    said = agent.hint(payload)
    if said is None or _superseded(root, role, said[1]):
        return False
    write_hint(root, role, *said)
    return True


def _remember(
    env: dict[str, str], root: str, role: str, agent: Agent, payload: dict[str, object]
) -> None:
    """Record the agent's own session, which the next `up` of the run resumes."""
    session, run_id = agent.conversation(payload), env.get(RUN_TAG)
    if not (session and run_id):
        return
    with contextlib.suppress(OSError):  # a hint never fails the agent that sent it
        conversation.record(root, role, conversation.Conversation(agent.name, session, run_id))
