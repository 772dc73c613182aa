"""The cockpit's hub: the swarm read once for every open page, and each page's stream of
what changed."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import AsyncIterator, Callable

from starlette.requests import Request

from swarmforge.run import overview
from swarmforge.views.cockpit.state import runs_stamp, shown_event, swarm_state
from swarmforge.views.eventtail import EVENTS_KEPT
from swarmforge.views.feed import EVERY, Feed

PING = 15  # seconds between keep-alive comments on an idle stream


class Hub:
    """The swarm read for every open page at once; each page gets what changed."""

    def __init__(self, root: str, every: float = EVERY) -> None:
        self.root = root
        self.feed = Feed(root, every)
        self.state: dict[str, object] | None = None  # the last state pushed
        self.recent: deque[dict[str, object]] = deque(maxlen=EVENTS_KEPT)
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
        shown = [shown_event(e) for e in found]
        self.recent.extend(shown)
        if shown:
            self._push("events", shown)
        if state != self.state:
            self.state = state
            self._push("state", state)

    def _read(self) -> tuple[dict[str, object], list[dict[str, object]]]:
        snap, found = self.feed.read()
        return {**swarm_state(self.root, snap), "runs": self._planned()}, found

    def _planned(self) -> list[dict[str, object]]:
        """The planned runs, read again only when a journal or a park ledger has changed."""
        stamp = runs_stamp(self.root)
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
