"""`swarmforge cockpit`: the live view of the swarm in a browser, read-only.

One page (cockpit.html, no build step, no third-party code) shows what `watch` shows,
one row per role and the latest events, plus the project's planned runs: every
task with its state and what it depends on, and the parked tasks with their reasons.
The page opens one Server-Sent Events stream (`/stream`) and changes in place as
the server pushes: it never reloads and never polls. With `[transport]` the rows also
hold the roles of the swarm's other hosts (`"remote": true`, read from their heartbeats
no more than every few seconds) and the state lists every host: what only a role's own
host can show (output, diff, handoff, a terminal) answers with the host that runs it.

The server reads the swarm once for every page at once (`Hub`), and only while a page
is open: when feed.py says it may have changed, and not otherwise. The page ages what
it shows between two states by itself. Nothing here writes to the project: no
endpoint changes anything.

It listens on loopback unless told otherwise. Beyond loopback every request must
carry the token printed at start-up (`?token=` in the URL the page was opened with,
or `Authorization: Bearer`); on loopback, requests must name a loopback host, so a
web page elsewhere cannot reach the cockpit through a DNS name it controls.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import secrets
import socket
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import asdict
from importlib import resources
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from swarmforge.errors import SwarmforgeError
from swarmforge.events import line
from swarmforge.layout import LOGS_DIR
from swarmforge.run import overview
from swarmforge.swarm.hoststatus import elsewhere
from swarmforge.views import watchdata
from swarmforge.views.attach import attach_command
from swarmforge.views.feed import EVERY, Feed
from swarmforge.views.watchdata import Snapshot

OUTPUT_LOOK = 0.25  # seconds between looks at a shown role's output log
PING = 15  # seconds between keep-alive comments on an idle stream
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


class Hub:
    """The swarm read for every open page at once; each page gets what changed."""

    def __init__(self, root: str, every: float = EVERY) -> None:
        self.root = root
        self.feed = Feed(root, every)
        self.state: dict[str, object] | None = None  # the last state pushed
        self.recent: deque[dict[str, object]] = deque(maxlen=watchdata.EVENTS_KEPT)
        self.pages: set[asyncio.Queue[tuple[str, object]]] = set()
        self.wake = asyncio.Event()  # a page came or went, or the feed was poked
        self._runs_stamp: tuple[tuple[str, int, int], ...] | None = None
        self._runs: list[dict[str, object]] = []

    async def run(self) -> None:
        """Read and push while a page is open, when a read is due; watch the project
        only while a page is open."""
        loop = asyncio.get_running_loop()

        def poke() -> None:  # from the feed's thread
            loop.call_soon_threadsafe(self.wake.set)

        try:
            while True:
                self.wake.clear()
                wait = await self._step(poke)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), wait)
        finally:
            self.feed.stop()

    async def _step(self, poke: Callable[[], None]) -> float | None:
        """Read if a page is open and a read is due; the seconds until one is due."""
        if not self.pages:
            self.feed.stop()
            return None
        if self.feed.changes is None:  # in a thread: it begins with a walk of every worktree
            await asyncio.to_thread(self.feed.start, poke)
        if self.state is None or self.feed.due():
            try:
                await self.refresh()
            except Exception as exc:  # the view outlives one read that went wrong
                self._push("state", {"problem": f"Cannot read the swarm: {exc}", "rows": []})
                return self.feed.every
        wait = self.feed.due_in()
        return None if wait == float("inf") else wait

    async def refresh(self) -> None:
        """Read the swarm (in a thread: git calls) and push whatever changed."""
        state, found = await asyncio.to_thread(self._read)
        shown = [_event(e) for e in found]
        self.recent.extend(shown)
        if shown:
            self._push("events", shown)
        if state != self.state:
            self.state = state
            self._push("state", state)

    def _read(self) -> tuple[dict[str, object], list[dict[str, object]]]:
        snap, found = self.feed.read()
        return {**_swarm(self.root, snap), "runs": self._planned()}, found

    def _planned(self) -> list[dict[str, object]]:
        """The planned runs, read again only when a journal or a park ledger has changed."""
        stamp = _runs_stamp(self.root)
        if stamp != self._runs_stamp:
            self._runs_stamp = stamp
            self._runs = [r.as_json() for r in overview.runs(self.root)]
        return self._runs

    def _push(self, kind: str, data: object) -> None:
        for page in self.pages:
            page.put_nowait((kind, data))

    async def stream(self, request: Request) -> AsyncIterator[dict[str, str]]:
        """One page's stream: the state and recent events now, then every change."""
        page: asyncio.Queue[tuple[str, object]] = asyncio.Queue()
        self.pages.add(page)
        self.feed.touch()  # the state below may be old: the swarm is read again now
        self.wake.set()
        try:
            if self.state is not None:
                yield {"event": "state", "data": json.dumps(self.state)}
            if self.recent:
                yield {"event": "events", "data": json.dumps(list(self.recent))}
            while True:
                kind, data = await page.get()
                yield {"event": kind, "data": json.dumps(data)}
        finally:
            self.pages.discard(page)
            self.wake.set()  # the last page gone: the project is no longer watched

    def role(self, name: str) -> dict[str, object] | None:
        """The last row shown of role `name`."""
        rows = self.state.get("rows", []) if self.state else []
        assert isinstance(rows, list)
        return next((r for r in rows if r.get("role") == name), None)


def _swarm(root: str, snap: Snapshot | str) -> dict[str, object]:
    """The swarm part of the page's state."""
    if isinstance(snap, str):
        return {"problem": snap, "rows": []}
    rows: list[dict[str, object]] = [
        {
            **asdict(row),
            "spent": watchdata.spent(row),
            "attach": " ".join(attach_command(root, row.role)),
        }
        for row in snap.rows
    ]
    shown: dict[str, object] = {
        "project": snap.project,
        "state": snap.state,
        "run_id": snap.run_id,
        "backend": snap.backend,
        "base": snap.base,
        "rows": rows,
    }
    cross = snap.cross
    if cross is not None:
        for row in rows:
            row["host"] = cross.this_host
        remote = [
            {**role.as_json(), "spent": "-", "elsewhere": elsewhere(role)} for role in cross.roles
        ]
        shown |= {
            "rows": rows + remote,
            "hosts": [host.as_json() for host in cross.hosts],
            "transport_error": cross.error,
        }
    return shown


def _event(event: dict[str, object]) -> dict[str, object]:
    """An event as the page shows it: its kind, time and one line of text."""
    return {"ts": event.get("ts"), "kind": event.get("kind"), "line": line(event)}


def _runs_stamp(root: str) -> tuple[tuple[str, int, int], ...]:
    """Size and time of every run's journal and park ledgers: what a change moves."""
    found = []
    for run_dir in overview.run_dirs(root):
        for name in sorted(os.listdir(run_dir)):
            if name.endswith((".jsonl", ".json")):
                try:
                    st = os.stat(os.path.join(run_dir, name))
                except OSError:
                    continue
                found.append((os.path.join(run_dir, name), st.st_size, st.st_mtime_ns))
    return tuple(found)


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


def app(root: str, *, token: str | None, hosts: list[str] | None, every: float = 2.0) -> Starlette:
    """The cockpit of the project at `root`: with a token, every request must carry it;
    with `hosts`, a request must name one of them."""
    hub = Hub(root, every)
    page = resources.files("swarmforge.views").joinpath("cockpit.html").read_text()

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def stream(request: Request) -> Response:
        return EventSourceResponse(hub.stream(request), ping=PING)

    def role_of(request: Request) -> dict[str, object]:
        row = hub.role(request.path_params["role"])
        if row is None:
            raise _NotFound(f"No role {request.path_params['role']} in the swarm.")
        if row.get("remote"):
            raise _Elsewhere(str(row["elsewhere"]))
        return row

    async def diff(request: Request) -> Response:
        row, state = role_of(request), hub.state or {}
        text = await asyncio.to_thread(
            watchdata.diff, str(state["project"]), str(state["base"]), str(row["branch"])
        )
        return PlainTextResponse(text)

    async def handoff(request: Request) -> Response:
        path = role_of(request)["current_path"]
        text = await asyncio.to_thread(watchdata.handoff, path if isinstance(path, str) else None)
        return PlainTextResponse(text)

    async def output(request: Request) -> Response:
        role = str(role_of(request)["role"])
        return EventSourceResponse(_output(root, role), ping=PING)

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(str(exc) + "\n", status_code=404)

    async def elsewhere(request: Request, exc: Exception) -> Response:
        # Not an error of the request: the answer is where the role runs.
        return PlainTextResponse(str(exc) + "\n")

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
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=hosts))
    if token:
        middleware.append(Middleware(TokenGate, token=token))
    routes = [
        Route("/", index),
        Route("/stream", stream),
        Route("/roles/{role}/diff", diff),
        Route("/roles/{role}/handoff", handoff),
        Route("/roles/{role}/output", output),
    ]
    return Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={_NotFound: not_found, _Elsewhere: elsewhere},
    )


class _NotFound(Exception):
    pass


class _Elsewhere(Exception):
    """The role runs on another host: what was asked for is there, not here."""


async def _output(root: str, role: str) -> AsyncIterator[dict[str, str]]:
    """A role's output log, sent again whenever it grows."""
    path = os.path.join(root, LOGS_DIR, role + ".log")
    seen: tuple[int, int] | None = (-1, -1)
    while True:
        try:
            st = os.stat(path)
            stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        if stamp != seen:
            seen = stamp
            text = await asyncio.to_thread(watchdata.output, root, role)
            yield {"event": "output", "data": json.dumps(text)}
        await asyncio.sleep(OUTPUT_LOOK)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: any free one); one clear error if not."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise SwarmforgeError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}.",
            hint="--port 0 takes any free port; --host names an address of this machine.",
        ) from None
    except OverflowError:
        raise SwarmforgeError(f"--port {port}: a port is a number from 0 to 65535.") from None


def url(host: str, port: int, token: str | None) -> str:
    """Where the cockpit is, with its token when it needs one."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(root: str, sock: socket.socket, *, token: str | None, hosts: list[str] | None) -> None:
    """Serve the cockpit on `sock` until interrupted."""
    import uvicorn

    config = uvicorn.Config(
        app(root, token=token, hosts=hosts),
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    uvicorn.Server(config).run(sockets=[sock])
