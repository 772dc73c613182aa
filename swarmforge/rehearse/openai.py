"""The OpenAI Responses API as codex speaks it to the scripted model server.

A request (POST <base>/responses) becomes an `Exchange`; a `Reply` goes back as a
completed response: a call of the shell tool the request offers or a closing
message, streamed as server-sent events when the request asks for a stream.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from swarmforge.rehearse.wire import (
    TOKENS_IN,
    TOKENS_OUT,
    Answer,
    Exchange,
    Json,
    Reply,
    json_answer,
    sse,
    text,
)

# codex stops waiting for a command after 10 s (its `yield_time_ms`), answers with this
# line and lets the command run on; a model then waits on it with `write_stdin`.
_RUNNING = re.compile(r"Process running with session ID (\d+)")
_POLL_MS = 30_000  # the longest wait codex allows

_USAGE = {
    "input_tokens": TOKENS_IN,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": TOKENS_OUT,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": TOKENS_IN + TOKENS_OUT,
}


def exchange(role: str, request: Json, at: float) -> Exchange:
    """The exchange a Responses request stands for."""
    raw = request.get("input") or []
    items: list[Json] = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw
    side = not request.get("tools")
    outputs: list[str] = []
    for item in reversed(items):
        if not str(item.get("type", "")).endswith("_call_output"):
            break
        output = item.get("output")
        outputs.insert(0, output if isinstance(output, str) else text(output))
    if outputs:
        running = _RUNNING.search(outputs[-1])
        session = int(running.group(1)) if running else None
        return Exchange(role, "openai", False, "", "\n".join(outputs), side, at, session)
    last = items[-1] if items else {}
    if last.get("type", "message") == "message" and last.get("role") == "user":
        earlier = "\n".join(
            text(i.get("content"))
            for i in items[:-1]
            if i.get("type", "message") == "message" and i.get("role") == "user"
        )
        return Exchange(
            role, "openai", True, text(last.get("content")), None, side, at, history=earlier
        )
    return Exchange(role, "openai", False, "", None, side, at)


def side_format(request: Json) -> Any:
    """The output format a side request asks for, if any."""
    return (request.get("text") or {}).get("format")


def shell_call(command: str, tools: list[Json], ident: str) -> Json:
    """An output item that runs `command` with whichever shell tool the request offers."""
    call = {"id": f"fc_{ident}", "call_id": f"call_{ident}", "status": "completed"}
    offered = {str(t.get("name") or t.get("type")) for t in tools}
    if "exec_command" in offered:
        name, arguments = "exec_command", json.dumps({"cmd": command})
    elif "shell_command" in offered:
        name, arguments = "shell_command", json.dumps({"command": command})
    elif "shell" in offered:
        name, arguments = "shell", json.dumps({"command": ["bash", "-lc", command]})
    else:
        raise ValueError(f"the request offers no shell tool, only {sorted(offered)}")
    return {**call, "type": "function_call", "name": name, "arguments": arguments}


def poll_call(session: int, ident: str) -> Json:
    """An output item that waits on the command still running in codex's `session`."""
    arguments = json.dumps({"session_id": session, "chars": "", "yield_time_ms": _POLL_MS})
    return {
        "id": f"fc_{ident}",
        "call_id": f"call_{ident}",
        "status": "completed",
        "type": "function_call",
        "name": "write_stdin",
        "arguments": arguments,
    }


def response(reply: Reply, request: Json, ident: str) -> Json:
    """The completed response for `reply`: the body of a non-streamed response."""
    if reply.poll is not None:
        item = poll_call(reply.poll, ident)
    elif reply.command is not None:
        item = shell_call(reply.command, request.get("tools") or [], ident)
    else:
        part = {"type": "output_text", "text": reply.text, "annotations": []}
        item = {"type": "message", "id": f"msg_{ident}", "role": "assistant", "content": [part]}
        item["status"] = "completed"
    return {
        "id": f"resp_{ident}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": request.get("model", "rehearsal"),
        "output": [item],
        "usage": _USAGE,
    }


def response_events(response: Json) -> list[Json]:
    """`response` as the events of a streamed Responses request."""
    created = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[Json] = [{"type": "response.created", "response": created}]
    for index, item in enumerate(response["output"]):
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return [*events, {"type": "response.completed", "response": response}]


def render(reply: Reply, request: Json, ident: str) -> Answer:
    """The response for `reply`: streamed if the request asks for it, else plain JSON."""
    body = response(reply, request, ident)
    return sse(response_events(body)) if request.get("stream") else json_answer(200, body)


def failure(reason: str) -> Answer:
    """The error answer that codex reports at once, without retrying."""
    # Codex retries a 5xx (for half a minute) but gives up on a 400 at once.
    body = {"error": {"type": "invalid_request_error", "code": None, "message": reason}}
    return json_answer(400, body)
