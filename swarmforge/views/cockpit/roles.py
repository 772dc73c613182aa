"""What the cockpit's page opens on one role: its diff, its handoff in hand, its growing output.

A role of another host answers with the host that runs it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from swarmforge import statedir
from swarmforge.layout import LOGS_DIR
from swarmforge.text import shown
from swarmforge.views import roletexts
from swarmforge.views.cockpit.hub import PING, Hub

OUTPUT_LOOK = 0.25  # seconds between looks at a shown role's output log
OUTPUT_EVERY = 1.0  # seconds at least between two renders of it


class NotFound(Exception):
    """No role of that name in the swarm."""


class Elsewhere(Exception):
    """The role runs on another host: what was asked for is there, not here."""


class RolePages:
    """The endpoints of one role (`/roles/{role}/...`), answered from the hub's last state."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def role_of(self, request: Request) -> dict[str, object]:
        row = self.hub.role(request.path_params["role"])
        if row is None:
            raise NotFound(f"No role {request.path_params['role']} in the swarm.")
        if row.get("remote"):
            raise Elsewhere(str(row["elsewhere"]))
        return row

    async def diff(self, request: Request) -> Response:
        row, state = self.role_of(request), self.hub.state or {}
        text = await asyncio.to_thread(
            roletexts.diff, str(state["project"]), str(state["base"]), str(row["branch"])
        )
        return PlainTextResponse(text)

    async def handoff(self, request: Request) -> Response:
        path = self.role_of(request)["current_path"]
        text = await asyncio.to_thread(roletexts.handoff, path if isinstance(path, str) else None)
        return PlainTextResponse(text)

    async def output(self, request: Request) -> Response:
        role = str(self.role_of(request)["role"])
        return EventSourceResponse(_output(self.hub.root, role), ping=PING)


async def not_found(request: Request, exc: Exception) -> Response:
    return PlainTextResponse(str(exc) + "\n", status_code=404)


async def elsewhere(request: Request, exc: Exception) -> Response:
    # Not an error of the request: the answer is where the role runs.
    return PlainTextResponse(str(exc) + "\n")


async def _output(root: str, role: str) -> AsyncIterator[dict[str, str]]:
    """A role's output log, sent again whenever it grows."""
    log = Path(statedir.path(root, LOGS_DIR), role + ".log")
    seen: tuple[int, int] | None = (-1, -1)
    rendered = -OUTPUT_EVERY
    while True:
        try:
            st = log.stat()
            stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        # Played through a terminal emulator, a screen costs a tenth of a second or more:
        # a busy agent's is sent again at most once per OUTPUT_EVERY.
        if stamp != seen and time.monotonic() - rendered >= OUTPUT_EVERY:
            seen, rendered = stamp, time.monotonic()
            screen = await asyncio.to_thread(roletexts.output, root, role)
            # As watch shows it: what control characters the screen kept, written as escapes.
            lines = "\n".join(shown(line) for line in screen.split("\n"))
            yield {"event": "output", "data": json.dumps(lines)}
        await asyncio.sleep(OUTPUT_LOOK)
