"""A role's output log shown as the screen a person saw: escape sequences played, not shown."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from swarmforge import statedir
from swarmforge.layout import LOGS_DIR
from swarmforge.text import has_control
from swarmforge.views import roletexts

# What claude and codex send their terminal: a title, a clear, colours, cursor moves, a
# spinner redrawn in place with "\r", and lines ended the way a terminal ends them.
SCREEN = (
    b"\x1b]2;t\x07"  # the window's title
    b"\x1b[2J\x1b[H"  # a clear screen, cursor home
    b"\x1b[2G\x1b[38;5;211mUnable\x1b[9Gto read the file\x1b[0m\r\n"
    b"\x1b[1m\xe2\xa3\xbe Working\x1b[0m\r\xe2\xa3\xbf Working (2s)\r\n"  # braille spinner
    b"\x1b[38;2;120;120;120m> \x1b[39mdone\x1b[K\r\n"
)


def log_at(root: Path, role: str = "coder") -> Path:
    logs = Path(statedir.path(str(root), LOGS_DIR))
    logs.mkdir(parents=True, exist_ok=True)
    return logs / f"{role}.log"


def test_the_output_is_the_screen_a_person_saw(tmp_path: Path) -> None:
    log_at(tmp_path).write_bytes(b"an earlier line\r\n" + SCREEN)

    shown = roletexts.output(str(tmp_path), "coder")

    assert shown.split("\n") == [" Unable to read the file", "⣿ Working (2s)", "> done"]
    assert not any(has_control(line) for line in shown.split("\n"))  # no ESC, BEL, "\r"


def test_a_log_without_a_terminal_keeps_its_lines(tmp_path: Path) -> None:
    log_at(tmp_path).write_bytes(b"".join(b"step %d\n" % n for n in range(300)))

    shown = roletexts.output(str(tmp_path), "coder", lines=3)

    assert shown == "step 297\nstep 298\nstep 299"


def test_a_long_log_is_shown_from_its_end(tmp_path: Path) -> None:
    line = b"\x1b[32mline %06d\x1b[0m\r\n"
    log_at(tmp_path).write_bytes(b"".join(line % n for n in range(20_000)))

    tail = roletexts.output(str(tmp_path), "coder").split("\n")
    read = roletexts.output(str(tmp_path), "coder", lines=20_000).split("\n")

    assert len(tail) == 200 and tail[-1] == "line 019999"
    # Far less is read than the log holds: what it read begins mid-line, and that part
    # line is left out rather than shown with the half of a sequence it holds.
    whole = roletexts.OUTPUT_BYTES // len(line % 0)
    assert read == [f"line {n:06d}" for n in range(20_000 - whole, 20_000)]


def test_an_empty_log_shows_nothing(tmp_path: Path) -> None:
    log_at(tmp_path).write_bytes(b"")

    assert roletexts.output(str(tmp_path), "coder") == ""


def test_a_fifo_as_the_log_is_said_and_never_read(tmp_path: Path) -> None:
    fifo = log_at(tmp_path)
    os.mkfifo(fifo)
    code = (
        "import sys; from swarmforge.views import roletexts; print(roletexts.output(*sys.argv[1:]))"
    )
    # In a child: a FIFO opened for reading would block this test forever.
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), "coder"],
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"(no output shown: {fifo} is a FIFO, not a regular file)\n"
