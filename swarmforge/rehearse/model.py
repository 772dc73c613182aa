"""A scripted model server that the real claude and codex CLIs talk to, offline.

Role R's base URL is /r/R, so every request says which role sent it. A request
of an agent's main loop becomes an `Exchange` handed to `decide`, whose `Reply`
(a shell command, or a text that ends the turn) goes back as the CLI expects:
Anthropic Messages for claude (POST <base>/v1/messages, see `anthropic`), OpenAI
Responses for codex (POST <base>/responses, see `openai`), as server-sent events
when streamed. Side requests offer no tools (both CLIs' session titles): the
server answers them.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from swarmforge.rehearse import anthropic, openai
from swarmforge.rehearse.loopback import LoopbackServer
from swarmforge.rehearse.side import side_reply
from swarmforge.rehearse.wire import Answer, Api, Exchange, Json, Reply, json_answer


class _WireFormat(Protocol):
    """What the server needs of a wire format: the `anthropic` and `openai` modules."""

    def exchange(self, role: str, request: Json, at: float) -> Exchange: ...
    def side_format(self, request: Json) -> Any: ...
    def render(self, reply: Reply, request: Json, ident: str) -> Answer: ...
    def failure(self, reason: str) -> Answer: ...


_FORMATS: dict[Api, _WireFormat] = {"anthropic": anthropic, "openai": openai}


@dataclass(frozen=True)
class Hit:
    """One HTTP request the server answered, whatever it was."""

    role: str
    method: str
    path: str
    status: int


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
        self._http = LoopbackServer((host, port), self.answer)

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
            return anthropic.count_tokens()
        if role and api_path == "/api/hello":
            # Claude's connectivity probe, sent unless nonessential traffic is disabled.
            return json_answer(200, {})
        missing = {"type": "not_found_error", "message": f"no {api_path}"}
        return json_answer(404, {"error": missing})

    def _turn(self, role: str, api: Api, body: bytes) -> Answer:
        wire = _FORMATS[api]
        try:
            request = json.loads(body)
            exchange = wire.exchange(role, request, time.time())
            with self._lock:
                self._exchanges.append(exchange)
            if exchange.side:
                reply = side_reply(wire.side_format(request))
            else:
                reply = self._decide(exchange)
            return wire.render(reply, request, f"{next(self._ids):06d}")
        # Whatever failed, `decide` included, is the CLI's to report.
        except Exception as exc:
            return wire.failure(f"rehearsal model: {type(exc).__name__}: {exc}")
