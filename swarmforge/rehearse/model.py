"""A scripted model server that the real claude and codex CLIs talk to, offline.

Role R's base URL is /r/R, so every request says which role sent it. A request
of an agent's main loop becomes an `Exchange` handed to `decide`, whose `Reply`
(a shell command, or a text that ends the turn) goes back as the CLI expects:
Anthropic Messages for claude (POST <base>/v1/messages), OpenAI Responses for
codex (POST <base>/responses), as server-sent events when streamed. Side
requests offer no tools (both CLIs' session titles): the server answers them.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

Json = dict[str, Any]
Api = Literal["anthropic", "openai"]
SIDE_TEXT = "ok"
# Claude puts harness notes into a user message as text blocks of their own.
_REMINDER = "<system-reminder>"
_TOKENS_IN, _TOKENS_OUT = 64, 16
_OPENAI_USAGE = {
    "input_tokens": _TOKENS_IN,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": _TOKENS_OUT,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": _TOKENS_IN + _TOKENS_OUT,
}


@dataclass(frozen=True)
class Exchange:
    """One request as the server understood it."""

    role: str
    api: Api
    new_turn: bool  # the last input is a user message (a prompt, a wake-up), not a tool result
    user_text: str  # the last user message's text; "" when continuing a turn
    tool_output: str | None  # the tool results' text when continuing a turn
    side: bool  # not the agent's main loop: answered here, never passed to `decide`
    at: float  # time.time() on arrival


@dataclass(frozen=True)
class Reply:
    """What the model does next: run `command` with the agent's shell tool, or say `text`."""

    command: str | None = None
    text: str = ""


@dataclass(frozen=True)
class Hit:
    """One HTTP request the server answered, whatever it was."""

    role: str
    method: str
    path: str
    status: int


@dataclass(frozen=True)
class Answer:
    """One HTTP response."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def _blocks(content: Any) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _text(content: Any) -> str:
    """The text in `content` (a string or typed blocks), harness reminders left out."""
    kinds = ("text", "input_text", "output_text")
    parts = [str(b.get("text", "")) for b in _blocks(content) if b.get("type") in kinds]
    return "\n".join(p for p in parts if not p.startswith(_REMINDER))


def _fill(schema: Any) -> Any:
    """A small value matching `schema`."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "object":
        properties = schema.get("properties") or {}
        return {k: _fill(properties.get(k)) for k in schema.get("required") or properties}
    return {"array": [], "integer": 0, "number": 0, "boolean": False}.get(str(kind), SIDE_TEXT)


def side_reply(output_format: Any) -> Reply:
    """The server's own answer to a side request, in the output format it asks for."""
    # Both CLIs ask for their session title as JSON matching a schema.
    if isinstance(output_format, dict) and output_format.get("type") == "json_schema":
        return Reply(text=json.dumps(_fill(output_format.get("schema"))))
    return Reply(text=SIDE_TEXT)


def _sse(events: Iterable[Json]) -> Answer:
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return Answer(200, body.encode(), "text/event-stream")


def _json(status: int, value: Json, headers: tuple[tuple[str, str], ...] = ()) -> Answer:
    return Answer(status, json.dumps(value).encode(), headers=headers)


# Anthropic Messages (claude)


def anthropic_exchange(role: str, request: Json, at: float) -> Exchange:
    """The exchange a Messages request stands for."""
    # Claude adds role "system" entries (environment notes), at the end of a first request.
    messages = [m for m in request.get("messages") or [] if m.get("role") != "system"]
    side = not request.get("tools")
    last = messages[-1] if messages else {"role": "user", "content": ""}
    blocks = _blocks(last.get("content"))
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if last.get("role") == "user" and not results:
        return Exchange(role, "anthropic", True, _text(blocks), None, side, at)
    output = "\n".join(_text(b.get("content")) for b in results) if results else None
    return Exchange(role, "anthropic", False, "", output, side, at)


def anthropic_message(reply: Reply, request: Json, ident: str) -> Json:
    """The assistant message for `reply`: the body of a non-streamed response."""
    if reply.command is None:
        content: list[Json] = [{"type": "text", "text": reply.text}]
    elif any(t.get("name") == "Bash" for t in request.get("tools") or []):
        tool_use = {"type": "tool_use", "id": f"toolu_{ident}", "name": "Bash"}
        content = [{**tool_use, "input": {"command": reply.command}}]
    else:
        raise ValueError("the request offers no Bash tool to run the command with")
    usage = {"input_tokens": _TOKENS_IN, "output_tokens": _TOKENS_OUT}
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


def anthropic_events(message: Json) -> list[Json]:
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
    events.append({"type": "message_delta", "delta": stop, "usage": {"output_tokens": _TOKENS_OUT}})
    return [*events, {"type": "message_stop"}]


# OpenAI Responses (codex)


def openai_exchange(role: str, request: Json, at: float) -> Exchange:
    """The exchange a Responses request stands for."""
    raw = request.get("input") or []
    items: list[Json] = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw
    side = not request.get("tools")
    outputs: list[str] = []
    for item in reversed(items):
        if not str(item.get("type", "")).endswith("_call_output"):
            break
        output = item.get("output")
        outputs.insert(0, output if isinstance(output, str) else _text(output))
    if outputs:
        return Exchange(role, "openai", False, "", "\n".join(outputs), side, at)
    last = items[-1] if items else {}
    if last.get("type", "message") == "message" and last.get("role") == "user":
        return Exchange(role, "openai", True, _text(last.get("content")), None, side, at)
    return Exchange(role, "openai", False, "", None, side, at)


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


def openai_response(reply: Reply, request: Json, ident: str) -> Json:
    """The completed response for `reply`: the body of a non-streamed response."""
    if reply.command is not None:
        item = shell_call(reply.command, request.get("tools") or [], ident)
    else:
        text = {"type": "output_text", "text": reply.text, "annotations": []}
        item = {"type": "message", "id": f"msg_{ident}", "role": "assistant", "content": [text]}
        item["status"] = "completed"
    return {
        "id": f"resp_{ident}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": request.get("model", "rehearsal"),
        "output": [item],
        "usage": _OPENAI_USAGE,
    }


def openai_events(response: Json) -> list[Json]:
    """`response` as the events of a streamed Responses request."""
    created = {**response, "status": "in_progress", "output": [], "usage": None}
    events: list[Json] = [{"type": "response.created", "response": created}]
    for index, item in enumerate(response["output"]):
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return [*events, {"type": "response.completed", "response": response}]


def failure(api: Api, message: str) -> Answer:
    """The error answer that the CLI speaking `api` reports at once, without retrying."""
    if api == "anthropic":
        # Claude retries a 400 several times, but no response marked not retryable.
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
        return _json(500, body, (("x-should-retry", "false"),))
    # Codex retries a 5xx (for half a minute) but gives up on a 400 at once.
    body = {"error": {"type": "invalid_request_error", "code": None, "message": message}}
    return _json(400, body)


def split_path(path: str) -> tuple[str, str]:
    """The role and the API path of a request path /r/<role>/<api path>."""
    plain = urlsplit(path).path
    found = re.fullmatch(r"/r/([^/]+)(/.*)?", plain)
    return (found[1], found[2] or "/") if found else ("", plain)


class ModelServer:
    """A loopback HTTP server that answers claude and codex from a `decide` function."""

    def __init__(
        self, decide: Callable[[Exchange], Reply], host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self._decide = decide
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self._errors: list[str] = []
        self._hits: list[Hit] = []
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._http = _HTTPServer((host, port), self.answer)

    def base_url(self, role: str) -> str:
        """The base URL that identifies `role`."""
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/r/{role}"

    def start(self) -> None:
        """Serve in a daemon thread."""
        # A short poll interval makes `stop` quick (the default is half a second).
        poll = {"poll_interval": 0.05}
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs=poll, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def exchanges(self, role: str | None = None) -> list[Exchange]:
        """The exchanges so far, in arrival order, side ones included."""
        with self._lock:
            return [e for e in self._exchanges if role is None or e.role == role]

    def errors(self) -> list[str]:
        """Every error answered so far: unknown paths, bad requests, `decide` raising."""
        with self._lock:
            return list(self._errors)

    def hits(self, role: str | None = None) -> list[Hit]:
        """Every request answered so far, in arrival order."""
        with self._lock:
            return [h for h in self._hits if role is None or h.role == role]

    def answer(self, method: str, path: str, body: bytes) -> Answer:
        """The answer to one HTTP request, recorded."""
        role, api_path = split_path(path)
        answer = self._route(role, method, api_path, body)
        with self._lock:
            self._hits.append(Hit(role, method, path, answer.status))
            if answer.status >= 400:
                self._errors.append(f"{answer.status} {method} {path}: {answer.body.decode()}")
        return answer

    def _route(self, role: str, method: str, api_path: str, body: bytes) -> Answer:
        if role and method == "POST" and api_path == "/v1/messages":
            return self._turn(role, "anthropic", body)
        if role and method == "POST" and api_path == "/responses":
            return self._turn(role, "openai", body)
        if role and method == "POST" and api_path == "/v1/messages/count_tokens":
            return _json(200, {"input_tokens": _TOKENS_IN})
        if role and api_path == "/api/hello":
            # Claude's connectivity probe, sent unless nonessential traffic is disabled.
            return _json(200, {})
        return _json(404, {"error": {"type": "not_found_error", "message": f"no {api_path}"}})

    def _turn(self, role: str, api: Api, body: bytes) -> Answer:
        try:
            request = json.loads(body)
            parse = anthropic_exchange if api == "anthropic" else openai_exchange
            exchange = parse(role, request, time.time())
            with self._lock:
                self._exchanges.append(exchange)
            if exchange.side:
                # Claude asks for an output format in output_config, codex in text.
                settings = request.get("output_config" if api == "anthropic" else "text") or {}
                return self._render(api, side_reply(settings.get("format")), request)
            return self._render(api, self._decide(exchange), request)
        # Whatever failed, `decide` included, is the CLI's to report.
        except Exception as exc:
            return failure(api, f"rehearsal model: {type(exc).__name__}: {exc}")

    def _render(self, api: Api, reply: Reply, request: Json) -> Answer:
        ident = f"{next(self._ids):06d}"
        if api == "anthropic":
            message = anthropic_message(reply, request, ident)
            return _sse(anthropic_events(message)) if request.get("stream") else _json(200, message)
        response = openai_response(reply, request, ident)
        return _sse(openai_events(response)) if request.get("stream") else _json(200, response)


class _HTTPServer(ThreadingHTTPServer):
    """The HTTP server, holding the function that answers its requests."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], answer: Callable[[str, str, bytes], Answer]):
        super().__init__(address, _Handler)
        self.answer = answer


class _Handler(BaseHTTPRequestHandler):
    """Hands every request to the server's `answer` and writes what it returns."""

    # Both CLIs reuse connections; HTTP/1.1 keeps them open between requests.
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        assert isinstance(self.server, _HTTPServer)
        answer = self.server.answer(self.command, self.path, body)
        self.send_response(answer.status)
        for name, value in (("Content-Type", answer.content_type), *answer.headers):
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: `hits` records every request."""
