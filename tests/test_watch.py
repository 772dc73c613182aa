"""`swarmforge watch`: the live view, driven by Textual's test pilot on a real project.

The session record is written by hand (as test_tokens.py does) rather than started with
`up`: the view only reads files and git, and no process keeps the default run waiting.
pytest-asyncio is not a dependency: each test runs its coroutine with asyncio.run.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Log, Static

from swarmforge import events
from swarmforge.agents import lifecycle
from swarmforge.cli.parser import build
from swarmforge.layout import LOGS_DIR
from swarmforge.times import duration
from swarmforge.views import roletexts
from swarmforge.views.rows import Row, spent
from swarmforge.views.watch.app import WatchApp
from swarmforge.views.watch.textscreen import TextScreen
from tests.support import Project, in_hand, make_swarm, record_run
from tests.support import run_cli as sf
from tests.viewsupport import EVERY, cells, until


def started(project: Project) -> None:
    """A running headless run of the project's roles, as `up` records it, with no processes."""
    record_run(project)


def listing(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `root` with its mtime and content, git's index caches aside."""
    found = {}
    for path in root.rglob("*"):
        # `git status`, which the view runs as `swarmforge status` does, may refresh the
        # stat cache in an index: git's own bookkeeping, not a change to the project.
        if path.is_file() and path.name not in ("index", "index.lock"):
            found[str(path.relative_to(root))] = (path.stat().st_mtime_ns, path.read_bytes())
    return found


def shown(app: WatchApp) -> str:
    """The text of the view's pushed screen."""
    screen = app.screen
    return "\n".join(screen.query_one(Log).lines) if isinstance(screen, TextScreen) else ""


async def opened(pilot: Pilot[None], app: WatchApp, key: str, wanted: str) -> None:
    await pilot.press(key)
    await until(pilot, lambda: wanted in shown(app))
    await pilot.press("escape")
    await until(pilot, lambda: not isinstance(app.screen, TextScreen))


def test_the_view_shows_each_role_and_its_work_and_changes_nothing(project: Project) -> None:
    started(project)
    project.commit("coder")
    in_hand(project, "coder", "please fix the parser\n")
    log = project.root / LOGS_DIR / "coder.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(f"step {i}\n" for i in range(500)) + "hello from coder\n")
    before = listing(project.root)

    async def drive() -> None:
        app = WatchApp(str(project.root), every=EVERY)
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: len(cells(app, "qa")) > 0)
            coder = dict(
                zip(
                    ("role", "state", "for", "queue", "oldest", "current"),
                    cells(app, "coder"),
                    strict=False,
                )
            )
            assert coder["current"].endswith(".handoff")
            assert cells(app, "coder")[6:9] == ["4000", "swarm/test/coder", "1"]
            assert cells(app, "cleaner")[5] == "-" and cells(app, "cleaner")[8] == "0"
            assert "run r1 (headless) running" in str(app.query_one("#summary", Static).content)

            await opened(pilot, app, "o", "hello from coder")
            assert "step 0\n" not in shown(app) + "\n"  # only the last lines
            await opened(pilot, app, "d", "work.txt |")
            await opened(pilot, app, "h", "please fix the parser")
            await opened(pilot, app, "question_mark", "q         quit")
            await pilot.press("a")  # headless: says so, and the view stays
            assert listing(project.root) == before

            # Live: a handoff queued for cleaner and an event appear without a restart.
            project.enqueue(
                "cleaner",
                "50_20260101T000001Z_000002_from_coder_to_cleaner.handoff",
                {"from": "coder", "to": "cleaner"},
            )
            events.emit(str(project.root), "watch-test", {"role": "cleaner"})
            written = listing(project.root)
            events_log = app.query_one("#events", Log)
            await until(pilot, lambda: cells(app, "cleaner")[3] == "1")
            await until(pilot, lambda: any("watch-test" in line for line in events_log.lines))
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)
        assert listing(project.root) == written

    asyncio.run(drive())


def test_a_change_shows_without_waiting_for_the_safety_read(project: Project) -> None:
    started(project)
    root = str(project.root)

    async def drive() -> None:
        app = WatchApp(root, every=EVERY)
        app.feed.safety = 3600  # only a change that announces itself is read
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: len(cells(app, "qa")) > 0)
            assert cells(app, "coder")[5] == "-" and cells(app, "coder")[8:10] == ["0", "0"]
            assert cells(app, "qa")[1] != "exited"
            # A handoff taken in hand: the mailbox moves.
            in_hand(project, "coder", "please fix the parser\n")
            await until(pilot, lambda: cells(app, "coder")[5].endswith(".handoff"))
            # An agent's process exits: its start and exit record, and an event.
            lifecycle.exited(root, "qa", "r1", 3, ["bye"], "never", 5)
            await until(pilot, lambda: cells(app, "qa")[1] == "exited")
            # A commit in a role's worktree, then an edit in another's.
            project.commit("coder")
            await until(pilot, lambda: cells(app, "coder")[8] == "1")
            (project.tree("cleaner") / "notes.txt").write_text("half done\n")
            await until(pilot, lambda: cells(app, "cleaner")[9] == "1")
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)

    asyncio.run(drive())


def test_with_no_swarm_the_view_opens_and_says_so(repo: Path) -> None:
    async def drive() -> None:
        app = WatchApp(str(repo), every=EVERY)
        async with app.run_test() as pilot:
            summary = app.query_one("#summary", Static)
            await until(pilot, lambda: "No swarm is running" in str(summary.content))
            await pilot.press("o")  # no role: a notice, no screen
            assert not isinstance(app.screen, TextScreen)
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)

    asyncio.run(drive())
    assert not (repo / ".swarmforge").exists()


def test_watch_is_a_command_with_a_project_option(tmp_path: Path) -> None:
    ns = build().parse_args(["watch", "--project", str(tmp_path)])
    assert ns.project == str(tmp_path) and ns.handler.__module__ == "swarmforge.cli.watch_cmd"


def test_the_data_reads_a_batch_and_says_what_is_missing(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    for i in (1, 2):
        (batch / f"50_2026_{i}.handoff").write_text(f"item {i}\n")
    assert roletexts.handoff(str(batch)).count("== 50_2026_") == 2
    assert roletexts.handoff(None) == "(no item in hand)"
    assert "cannot be read" in roletexts.output(str(tmp_path), "nobody")
    assert [duration(s) for s in (None, 5, 125, 7200, 90000)] == [
        "-",
        "5s",
        "2m",
        "2h",
        "1d",
    ]


@pytest.mark.slow
def test_the_view_follows_a_real_headless_swarm(repo: Path) -> None:
    make_swarm(repo, "window worker exec worker task sh -c 'cat; echo working on it; sleep 30'\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0

    async def drive() -> None:
        app = WatchApp(str(repo), every=EVERY)
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: len(cells(app, "worker")) > 0, timeout=30)
            assert cells(app, "worker")[5] == "-"
            sent = sf("send", "worker", "please work", cwd=repo)
            assert sent.returncode == 0, sent.stderr
            await until(pilot, lambda: cells(app, "worker")[5] != "-", timeout=30)
            log = app.query_one("#events", Log)
            await until(pilot, lambda: any("worker" in line for line in log.lines), timeout=30)
            await opened(pilot, app, "h", "please work")
            await opened(pilot, app, "o", "working on it")
            await pilot.press("q")
            await until(pilot, lambda: not app.is_running)

    try:
        asyncio.run(drive())
    finally:
        assert sf("down", cwd=repo).returncode == 0


def test_tokens_show_against_the_budget_when_there_is_one() -> None:
    row = Row(
        *("coder", "working", 5, 0, None, "", None, 4000, "b", 1, 0),
        tokens=12345,
        budget=50000,
    )
    assert spent(row) == "12,345/50,000"
    assert spent(replace(row, budget=None)) == "12,345"
    assert spent(replace(row, tokens=None)) == "-"
