"""Hostile files where a role's state, its log and its diff are read: FIFOs and huge ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmforge import statedir
from swarmforge.layout import AGENTS_DIR, LOGS_DIR
from swarmforge.views import roletexts
from tests.support import SWARMFORGE, VENV_BIN, Project, git, record_run

# Generous: each of these used to block forever, and a run that passes takes a second or two.
HANG = 10

STATE_FILES = {
    "its log": (LOGS_DIR, "coder.log"),
    "its life": (AGENTS_DIR, "coder.json"),
    "its hint": (AGENTS_DIR, "coder.hint.json"),
    "its state": (AGENTS_DIR, "coder.state.json"),
}


def status(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SWARMFORGE, "status", *args],
        cwd=project.root,
        env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"},
        capture_output=True,
        text=True,
        timeout=HANG,
    )


def in_view(call: str, *args: str) -> str:
    """What `roletexts.<call>` gives a view, called in a child (a FIFO would block it)."""
    code = f"import sys; from swarmforge.views import roletexts; print(roletexts.{call})"
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=HANG
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.removesuffix("\n")


@pytest.mark.parametrize("which", STATE_FILES)
def test_a_fifo_at_a_roles_state_file_is_named_by_status_and_never_waited_on(
    project: Project, which: str
) -> None:
    record_run(project)
    where, name = STATE_FILES[which]
    fifo = Path(statedir.path(str(project.root), where), name)
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    said = f"{fifo} is a FIFO, not a regular file: remove it"

    text = status(project)
    assert text.returncode == 0, text.stderr
    assert f"    not read: {said}\n" in text.stdout
    shown = status(project, "--json")
    assert shown.returncode == 0, shown.stderr
    roles = {r["role"]: r for r in json.loads(shown.stdout)["roles"]}
    assert roles["coder"]["unreadable"] == [said]
    assert roles["qa"]["unreadable"] == []
    assert fifo.is_fifo()  # named, and left for its owner to remove


def test_a_fifo_as_a_roles_log_leaves_the_runner_starting_it(tmp_path: Path) -> None:
    fifo = tmp_path / "coder.log"
    os.mkfifo(fifo)
    start = (
        "import sys\n"
        "from swarmforge.swarm.headless.child import Child\n"
        "child = Child(['true'], sys.argv[1], {'PATH': '/usr/bin:/bin'}, sys.argv[2], 'never')\n"
        "child.start()\n"
        "print(child.proc.wait(), child.unlogged)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", start, str(tmp_path), str(fifo)],
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"0 {fifo} is a FIFO, not a regular file. Its output is discarded.\n"


def test_a_fifo_as_a_roles_log_is_said_in_the_views_output_pane(tmp_path: Path) -> None:
    logs = Path(statedir.path(str(tmp_path), LOGS_DIR))
    logs.mkdir(parents=True)
    os.mkfifo(logs / "coder.log")
    fifo = logs / "coder.log"
    said = f"(no output shown: {fifo} is a FIFO, not a regular file)"
    assert in_view("output(sys.argv[1], 'coder')", str(tmp_path)) == said


def test_a_fifo_as_the_item_in_hand_is_said_in_the_views_handoff_pane(tmp_path: Path) -> None:
    fifo = tmp_path / "50_20260101T000000Z_000001_from_qa_to_coder.handoff"
    os.mkfifo(fifo)
    said = f"== {fifo.name}: cannot be read (not a regular file (a FIFO))"
    assert in_view("handoff(sys.argv[1])", str(fifo)) == said


def test_a_diff_over_the_limit_ends_at_a_whole_line_and_says_where_it_was_cut(
    repo: Path,
) -> None:
    git(repo, "checkout", "-q", "-b", "swarm/big")
    # About 3 MiB of diff in lines of 100 bytes, each line told apart by its number.
    (repo / "big.txt").write_text("".join(f"{n:09d} {'x' * 90}\n" for n in range(30_000)))
    git(repo, "add", "big.txt")
    git(repo, "commit", "-q", "-m", "big")
    whole = git(repo, "diff", "--no-color", "main...swarm/big", "--") + "\n"

    shown = roletexts.diff(str(repo), "main", "swarm/big")

    *lines, last = shown.split("\n")
    assert last == (
        f"… cut at {roletexts.DIFF_BYTES:,} bytes: `git diff main...swarm/big` shows the rest"
    )
    body = "\n".join(lines[lines.index("") + 1 :]) + "\n"  # after the --stat and its blank line
    assert whole.startswith(body) and len(body) < len(whole)
    stat = "\n".join(lines[: lines.index("")]) + "\n"
    assert len(stat.encode()) + len(body.encode()) <= roletexts.DIFF_BYTES


def test_a_diff_within_the_limit_is_whole(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "swarm/small")
    (repo / "small.txt").write_text("one\ntwo\n")
    git(repo, "add", "small.txt")
    git(repo, "commit", "-q", "-m", "small")
    shown = roletexts.diff(str(repo), "main", "swarm/small")
    assert "cut at" not in shown and shown.endswith("+two")
    assert roletexts.diff(str(repo), "main", "main") == "(no difference between main and main)"
