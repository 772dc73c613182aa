"""The cockpit's web application: its routes, the checks every request passes, and the hub
that reads the swarm while it serves."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from importlib import resources

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from swarmforge.views.cockpit.access import NamedHosts, TokenGate
from swarmforge.views.cockpit.hub import PING, Hub
from swarmforge.views.cockpit.roles import Elsewhere, NotFound, RolePages, elsewhere, not_found


def app(root: str, *, token: str | None, hosts: list[str] | None, every: float = 2.0) -> Starlette:
    """The cockpit of the project at `root`: with a token, every request must carry it;
    with `hosts`, a request must name one of them."""
    hub = Hub(root, every)
    roles = RolePages(hub)
    page = resources.files("swarmforge.views.cockpit").joinpath("cockpit.html").read_text()

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def stream(request: Request) -> Response:
        return EventSourceResponse(hub.stream(request), ping=PING)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(hub.run())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    middleware = []
    if hosts:
        middleware.append(Middleware(NamedHosts, hosts=hosts))
    if token:
        middleware.append(Middleware(TokenGate, token=token))
    routes = [
        Route("/", index),
        Route("/stream", stream),
        Route("/roles/{role}/diff", roles.diff),
        Route("/roles/{role}/handoff", roles.handoff),
        Route("/roles/{role}/output", roles.output),
    ]
    return Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={NotFound: not_found, Elsewhere: elsewhere},
    )
