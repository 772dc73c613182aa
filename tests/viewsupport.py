"""Helpers the view tests share: the cockpit served for real, and the watch app's pilot."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable

from swarmforge.views.watch.app import WatchApp
from tests.realagents import VENV_BIN
from tests.support import SWARMFORGE

WAIT = 30_000  # ms Playwright waits for the page to show something


@contextmanager
def served(root: Path, *options: str) -> Iterator[dict[str, object]]:
    """`swarmforge cockpit --json` serving `root`; what it printed at start-up."""
    env = {**os.environ, "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    server = subprocess.Popen(
        [SWARMFORGE, "cockpit", "--json", *options],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first, server.stderr.read() if server.stderr else ""
        yield json.loads(first)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            code = server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise AssertionError("the cockpit did not stop on Ctrl-C") from None
        errors = server.stderr.read() if server.stderr else ""
        # Stopped as Ctrl-C stops a command: 128 + SIGINT, quietly.
        assert code == 130 and "Traceback" not in errors, (code, errors)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """The status and body of a GET."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as r:
            return r.status, r.read(4096).decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


# The view's refresh period here (2 s when run for real). The pilot waits for the app to
# be idle after each key, up to 1 s: a shorter period would keep it from ever being idle.
EVERY = 0.5


async def until(pilot: Pilot[None], check: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until `check` holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await pilot.pause(0.02)


def cells(app: WatchApp, role: str) -> list[str]:
    table: DataTable[str] = app.query_one(DataTable)
    return (
        [str(c) for c in table.get_row(role)] if role in [str(k.value) for k in table.rows] else []
    )
