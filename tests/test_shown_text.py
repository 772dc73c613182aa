"""Outside text a person sees: command lines to paste come out quoted, and what roles,
specs and handoffs say reaches the terminal with its control characters escaped and its
square brackets shown as written."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from pathlib import Path

from textual.widgets import Static

from swarmforge.agents import lifecycle
from swarmforge.handoff.mailbox import Box
from swarmforge.layout import LOGS_DIR
from swarmforge.swarm.bootstrap import marks
from swarmforge.views.attach import attach_command
from swarmforge.views.cockpit.state import swarm_state
from swarmforge.views.rows import Row
from swarmforge.views.snapshot import Snapshot
from swarmforge.views.watch.app import WatchApp
from tests.support import Project, copy_tree, record_run
from tests.support import run_cli as sf
from tests.test_watch import opened
from tests.viewsupport import EVERY, cells, until

# A terminal title and a screen clear: written raw, they act on the terminal.
TITLE, CLEAR = "\x1b]2;title\x07", "\x1b[2J"
TITLE_SHOWN, CLEAR_SHOWN = "\\x1b]2;title\\x07", "\\x1b[2J"


def test_the_cockpit_attach_line_runs_as_the_command_it_names(tmp_path: Path) -> None:
    root = tmp_path / "p $(touch${IFS}PWN) *"
    root.mkdir()
    (tmp_path / "a b").touch()  # something for a glob to match
    role = "$(touch${IFS}PWN)st*r"
    row = Row(role, "idle", 1, 0, None, "", None, 4000, "swarm/r1/x", 0, 0, None, None)
    snap = Snapshot(str(root), "running", "r1", "tmux", "main", [row])
    said = swarm_state(str(root), snap)["rows"]
    assert isinstance(said, list)
    line = said[0]["attach"]
    assert line == shlex.join(attach_command(str(root), role))
    # Pasted into a shell, with a printer in place of swarmforge: the words come back as
    # they are, and nothing ran.
    printer = "printf '%s\\n'" + line.removeprefix("swarmforge")
    ran = subprocess.run(
        ["bash", "-c", printer], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert ran.stdout.splitlines() == ["attach", role, "--project", os.path.realpath(root)]
    assert not list(tmp_path.rglob("PWN"))


def test_status_shows_what_an_agent_and_a_setup_left_on_screen_escaped(
    project: Project,
) -> None:
    record_run(project)
    root = str(project.root)
    lifecycle.started(root, "coder", "r1", pid=2**22 + 1, restarts=0)
    lifecycle.exited(root, "coder", "r1", 3, ["building", TITLE, f"{CLEAR} gone"], "never", 5)
    marks.mark(
        root,
        marks.SetupFailure(
            role="qa",
            reason=f"setup command `make{CLEAR}` exited 2",
            command=f"make{CLEAR}",
            exit_code=2,
            last_lines=(f"made {TITLE}",),
        ),
    )
    result = sf("status", cwd=project.root)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert f"  | {TITLE_SHOWN}\n" in result.stdout
    assert f"  | {CLEAR_SHOWN} gone\n" in result.stdout
    assert f"setup command `make{CLEAR_SHOWN}` exited 2" in result.stdout
    assert f"  | made {TITLE_SHOWN}\n" in result.stdout


def test_runs_list_and_tail_show_a_goal_escaped(tmp_path: Path) -> None:
    (tmp_path / "spec.toml").write_text(
        'goal = "g\\u001b]2;title\\u0007\\u001b[2J"\n[[tasks]]\nid = "ok"\ncommand = ["true"]\n'
    )
    assert sf("run", "spec.toml", cwd=tmp_path).returncode == 0
    listed = sf("runs", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.rstrip("\n").endswith(f"  g{TITLE_SHOWN}{CLEAR_SHOWN}")
    run_id = listed.stdout.split()[0]
    tail = sf("tail", run_id, cwd=tmp_path)
    assert tail.returncode == 0, tail.stderr
    assert f"goal=g{TITLE_SHOWN}{CLEAR_SHOWN}" in tail.stdout
    for out in (listed.stdout, tail.stdout):
        assert "\x1b" not in out and "\x07" not in out


def test_watch_shows_brackets_as_written_and_control_characters_escaped(
    template_repo: Path, tmp_path: Path
) -> None:
    repo = copy_tree(template_repo, tmp_path / "p[bold]q")
    project = Project(repo, {"coder": "task"})
    record_run(project)
    item = "50_20260101T000000Z_000001_[bold]x.handoff"
    queued = project.enqueue("coder", item, {"from": "lead", "to": "coder"}, f"do {TITLE}\n")
    target = project.box("coder", Box.IN_PROCESS)
    target.mkdir(parents=True, exist_ok=True)
    queued.rename(target / item)
    log = repo / LOGS_DIR / "coder.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"{CLEAR}said [red]hi\n")

    async def drive() -> None:
        app = WatchApp(str(repo), every=EVERY)
        async with app.run_test(size=(200, 40)) as pilot:
            await until(pilot, lambda: len(cells(app, "coder")) > 0)
            summary = app.query_one("#summary", Static)
            assert f"{repo}  run r1" in str(summary.render())
            # The table's cell, as the terminal gets it: the item's name as written.
            await until(pilot, lambda: "_[bold]x.handoff" in app.export_screenshot())
            await opened(pilot, app, "h", f"do {TITLE_SHOWN}")
            # The log's screen, played: its clear is done, not shown; its brackets are text.
            await opened(pilot, app, "o", "said [red]hi")
            await pilot.press("q")

    asyncio.run(drive())
