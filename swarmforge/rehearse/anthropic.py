"""The Anthropic Messages API as claude speaks it to the scripted model server.

A request (POST <base>/v1/messages) becomes an `Exchange`; a `Reply` goes back as
an assistant message: a Bash tool use or a closing text, streamed as server-sent
events when the request asks for a stream.
"""

from __future__ import annotations

import json
from typing import Any

from swarmforge.rehearse.wire import (
    TOKENS_IN,
    TOKENS_OUT,
    Answer,
    Exchange,
    Json,
    Reply,
    blocks,
    json_answer,
    sse,
    text,
)


def exchange(role: str, request: Json, at: float) -> Exchange:
    """The exchange a Messages request stands for."""
    # Claude adds role "system" entries (environment notes), at the end of a first request.
    messages = [m for m in request.get("messages") or [] if m.get("role") != "system"]
    side = not request.get("tools")
    last = messages[-1] if messages else {"role": "user", "content": ""}
    content = blocks(last.get("content"))
    results = [b for b in content if b.get("type") == "tool_result"]
    if last.get("role") == "user" and not results:
        earlier = "\n".join(
            text(blocks(m.get("content"))) for m in messages[:-1] if m.get("role") == "user"
        )
        return Exchange(role, "anthropic", True, text(content), None, side, at, history=earlier)
    output = "\n".join(text(b.get("content")) for b in results) if results else None
    # A message claude's inbox took while a tool ran follows the results as a "system"
    # entry ("Another Claude session sent a message while you were working: ...").
    return Exchange(role, "anthropic", False, _notes_after(request), output, side, at)


def _notes_after(request: Json) -> str:
    """The text of the "system" entries after the last message of the conversation."""
    notes: list[str] = []
    for entry in reversed(request.get("messages") or []):
        if entry.get("role") != "system":
            break
        notes.insert(0, text(blocks(entry.get("content"))))
    return "\n".join(notes)


def side_format(request: Json) -> Any:
    """The output format a side request asks for, if any."""
    return (request.get("output_config") or {}).get("format")


def message(reply: Reply, request: Json, ident: str) -> Json:
    """The assistant message for `reply`: the body of a non-streamed response."""
    if reply.command is None:
        content: list[Json] = [{"type": "text", "text": reply.text}]
    elif any(t.get("name") == "Bash" for t in request.get("tools") or []):
        tool_use = {"type": "tool_use", "id": f"toolu_{ident}", "name": "Bash"}
        content = [{**tool_use, "input": {"command": reply.command}}]
    else:
        raise ValueError("the request offers no Bash tool to run the command with")
    usage = {"input_tokens": TOKENS_IN, "output_tokens": TOKENS_OUT}
    return {
        "id": f"msg_{ident}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "rehearsal"),
        "content": content,
        "stop_reason": "end_turn" if reply.command is None else "tool_use",
        "stop_sequence": None,
        "usage": {**usage, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def message_events(message: Json) -> list[Json]:
    """`message` as the events of a streamed Messages response."""
    start = {**message, "content": [], "stop_reason": None}
    events: list[Json] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            first: Json = {"type": "text", "text": ""}
            delta: Json = {"type": "text_delta", "text": block["text"]}
        else:
            first = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            {"type": "content_block_start", "index": index, "content_block": first},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append({"type": "message_delta", "delta": stop, "usage": {"output_tokens": TOKENS_OUT}})
    return [*events, {"type": "message_stop"}]


def render(reply: Reply, request: Json, ident: str) -> Answer:
    """The response for `reply`: streamed if the request asks for it, else plain JSON."""
    body = message(reply, request, ident)
    return sse(message_events(body)) if request.get("stream") else json_answer(200, body)


def count_tokens() -> Answer:
    """The answer to a token count (POST <base>/v1/messages/count_tokens)."""
    return json_answer(200, {"input_tokens": TOKENS_IN})


def failure(reason: str) -> Answer:
    """The error answer that claude reports at once, without retrying."""
    # Claude retries a 400 several times, but no response marked not retryable.
    body = {"type": "error", "error": {"type": "api_error", "message": reason}}
    return json_answer(500, body, (("x-should-retry", "false"),))
