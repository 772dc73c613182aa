"""The views' feed: what they read, and when, on a real project with a hand-written record.

The cockpit's hub is driven in this process with asyncio.run (the browser tests keep an
event loop of their own running: they live in test_cockpit.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request

from swarmforge import events
from swarmforge.agents import hints
from swarmforge.views.cockpit.hub import Hub
from swarmforge.views.feed import Feed
from swarmforge.views.snapshot import Snapshot
from tests.support import Project, in_hand, record_run, retry_until

WAIT = 30.0  # seconds a pushed state may take


def test_a_change_is_pushed_without_waiting_for_the_safety_read(project: Project) -> None:
    record_run(project)
    root = str(project.root)
    states: list[dict[str, Any]] = []

    def shown(role: str, column: str) -> object:
        rows = states[-1]["rows"] if states else []
        return next((r[column] for r in rows if r["role"] == role), None)

    async def until(check: Callable[[], bool]) -> None:
        deadline = asyncio.get_running_loop().time() + WAIT
        while not check():
            assert asyncio.get_running_loop().time() < deadline, "not pushed in time"
            await asyncio.sleep(0.02)

    async def read(page: AsyncIterator[dict[str, str]]) -> None:
        async for message in page:
            if message["event"] == "state":
                states.append(json.loads(message["data"]))

    async def drive() -> None:
        hub = Hub(root, every=0.5)
        hub.feed.safety = 3600  # only a change that announces itself is read
        running = asyncio.create_task(hub.run())
        page = asyncio.create_task(read(hub.stream(Request({"type": "http"}))))
        try:
            await until(lambda: shown("cleaner", "queued") == 0)
            name = "50_20260101T000001Z_000002_from_coder_to_cleaner.handoff"
            project.enqueue("cleaner", name, {})
            await until(lambda: shown("cleaner", "queued") == 1)
            project.commit("coder")
            await until(lambda: shown("coder", "ahead") == 1)
            page.cancel()
            await asyncio.gather(page, return_exceptions=True)
            await until(lambda: hub.feed.changes is None)  # no page: no watch
        finally:
            for task in (page, running):
                task.cancel()
            await asyncio.gather(page, running, return_exceptions=True)

    asyncio.run(drive())


def test_reading_the_swarm_never_wakes_the_feed_and_a_quiet_one_waits(project: Project) -> None:
    record_run(project)
    in_hand(project, "coder", "please fix the parser\n")
    hints.write_hint(str(project.root), "coder", "idle", "test")
    feed = Feed(str(project.root), every=0.5, safety=3600)
    feed.start(lambda: None)
    try:
        assert feed.changes is not None and feed.due()
        snap, _ = feed.read()  # git in every worktree, every mailbox, the records
        assert isinstance(snap, Snapshot) and not feed.due()
        assert feed.due_in() > 60  # nothing changed: the next read is the safety read
        # Changes arrive in order: by the time a later one is seen, the read's would be.
        # (A directory made is one change; a file written is two: made, then closed.)
        (project.tree("cleaner") / "mark").mkdir()
        retry_until(lambda: feed.changes is not None and feed.changes.pending()[1])
        assert feed.changes.pending() == (False, True)
        assert feed.due_in() <= feed.every  # an edit: read, but not more often than that
        retry_until(feed.due)
        feed.read()
        events.emit(str(project.root), "feed-test", {})
        retry_until(lambda: feed.changes is not None and feed.changes.pending()[0])
        assert feed.changes.pending() == (True, False) and feed.due()
        feed.read()
        # What an agent's hooks say at every tool call counts as work, not as a new state.
        # (The event log's last write may still be announced late, as a state change, so
        # only the work flag is the hint's to set.)
        hints.write_hint(str(project.root), "coder", "working", "test")
        retry_until(lambda: feed.changes is not None and feed.changes.pending()[1])
    finally:
        feed.stop()
