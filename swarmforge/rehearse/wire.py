"""What the scripted model server and its two wire formats share.

A request of either API becomes an `Exchange`, the model's next step is a `Reply`,
and the HTTP response written back is an `Answer`, as JSON or server-sent events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Json = dict[str, Any]
Api = Literal["anthropic", "openai"]
TOKENS_IN, TOKENS_OUT = 64, 16
# Claude puts harness notes into a user message as text blocks of their own.
_REMINDER = "<system-reminder>"


@dataclass(frozen=True)
class Exchange:
    """One request as the server understood it."""

    role: str
    api: Api
    new_turn: bool  # the last input is a user message (a prompt, a wake-up), not a tool result
    # The last user message's text; continuing a turn, the notes after the results (a
    # message claude's inbox took meanwhile).
    user_text: str
    tool_output: str | None  # the tool results' text when continuing a turn
    side: bool  # not the agent's main loop: answered here, never passed to `decide`
    at: float  # time.time() on arrival
    # The command still runs after codex stopped waiting for it: its session id there.
    running: int | None = None
    # The text of the user's messages before the last: the conversation so far.
    history: str = ""


@dataclass(frozen=True)
class Reply:
    """What the model does next: run `command` with the agent's shell tool, wait on the
    command still running in codex's session `poll`, or say `text`."""

    command: str | None = None
    poll: int | None = None
    text: str = ""


@dataclass(frozen=True)
class Answer:
    """One HTTP response."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def blocks(content: Any) -> list[Json]:
    """`content` (a string or typed blocks) as typed blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def text(content: Any) -> str:
    """The text in `content` (a string or typed blocks), harness reminders left out."""
    kinds = ("text", "input_text", "output_text")
    parts = [str(b.get("text", "")) for b in blocks(content) if b.get("type") in kinds]
    return "\n".join(p for p in parts if not p.startswith(_REMINDER))


def sse(events: Iterable[Json]) -> Answer:
    """`events` as the body of a server-sent events response."""
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return Answer(200, body.encode(), "text/event-stream")


def json_answer(status: int, value: Json, headers: tuple[tuple[str, str], ...] = ()) -> Answer:
    """`value` as the body of a JSON response."""
    return Answer(status, json.dumps(value).encode(), headers=headers)
