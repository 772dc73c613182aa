"""Who may reach the cockpit: a listening address on loopback, and the token every request
carries when the cockpit listens beyond it."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True if listening on `host` reaches this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


class TokenGate:
    """Refuses every request that does not carry the token (ASGI middleware)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allowed(Request(scope)):
            refused = PlainTextResponse(
                "A token is required: open the URL `swarmforge cockpit` printed at start-up.\n",
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def allowed(self, request: Request) -> bool:
        given = request.query_params.get("token") or ""
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            given = header[7:].strip()
        return secrets.compare_digest(given.encode(), self.token.encode())


class NamedHosts:
    """Refuses every request whose Host header names none of `hosts` (ASGI middleware).

    Starlette's own check cuts the header at its first colon, which refuses every request
    to an IPv6 address (`Host: [::1]:8765`); here a bracketed address is read whole.
    """

    def __init__(self, app: ASGIApp, hosts: list[str]) -> None:
        self.app = app
        self.hosts = {h.lower() for h in hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and host_name(Request(scope).headers.get("host", "")) not in self.hosts
        ):
            refused = PlainTextResponse("Invalid host header\n", status_code=400)
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)


def host_name(header: str) -> str:
    """The host a Host header names, without its port or an IPv6 address's brackets."""
    if header.startswith("["):
        return header[1:].partition("]")[0].lower()
    return header.partition(":")[0].lower()
