"""An agent's own conversation, recorded so that the next `up` of the session resumes it.

claude and codex each give their session an id, and their hooks say it with every
call (`session_id`). The hook's `swarmforge agent-state` records it, with the agent
and the run, in `agents/<role>.conversation.json`. When `up` starts the role's agent
again in the same run (after `down`, or after a reboot took every process and the
tmux server), the agent resumes that conversation (`claude --resume <id>`, `codex
resume <id>`) with a word that the swarm was started again, instead of a new one.
`down --purge` ends the run, and with it the conversations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from swarmforge import filewrite, fsutil, statedir
from swarmforge.layout import AGENTS_DIR

RECORD_LIMIT = 64 * 1024  # a record is a line of JSON: anything larger was not written here

RESUMED = (
    "The swarm was stopped and started again; this is the same conversation. Run "
    "ready_for_next.sh: it gives you the task you were working on, if any, or the next one."
)


@dataclass(frozen=True)
class Conversation:
    """The session an agent of a role had in a run."""

    agent: str
    id: str
    run_id: str


def conversation_path(root: str, role: str) -> Path:
    """Where the conversation of `role`'s agent is recorded."""
    return Path(statedir.path(root, AGENTS_DIR), f"{role}.conversation.json")


def record(root: str, role: str, said: Conversation) -> None:
    """Record the conversation an agent's hook named, unless it is the one recorded."""
    if read(root, role) == said:
        return
    path = conversation_path(root, role)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"agent": said.agent, "id": said.id, "run_id": said.run_id})
    filewrite.atomic_write(str(path), data.encode() + b"\n", durable=False)


def read(root: str, role: str) -> Conversation | None:
    """The recorded conversation of `role`'s agent, or None (none, damaged, or not a
    regular file)."""
    try:
        raw = json.loads(
            fsutil.read_regular(str(conversation_path(root, role)), limit=RECORD_LIMIT)
        )
        return Conversation(str(raw["agent"]), str(raw["id"]), str(raw["run_id"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def to_resume(root: str, role: str, agent: str, run_id: str) -> str | None:
    """The id of the conversation the role's `agent` had in run `run_id`, to resume."""
    found = read(root, role)
    if found is None or found.agent != agent or found.run_id != run_id:
        return None
    return found.id


def forget(root: str) -> None:
    """Drop every recorded conversation: the run has ended (`down --purge`)."""
    for path in Path(statedir.path(root, AGENTS_DIR)).glob("*.conversation.json"):
        path.unlink(missing_ok=True)
