"""The HTTP server under the scripted model: threads on loopback that hand every request to
one function and write back the answer it returns."""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from swarmforge.rehearse.wire import Answer


class LoopbackServer(ThreadingHTTPServer):
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
        assert isinstance(self.server, LoopbackServer)
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
