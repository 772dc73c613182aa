"""A disk that fills up: every command says which file it could not write, never a traceback.

RLIMIT_FSIZE stands in for a full disk: a write past the limit fails (EFBIG, with
SIGXFSZ ignored) exactly where a write to a full disk fails (ENOSPC), and it can be
set for one process without a file system of its own.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
from pathlib import Path

from swarmforge import statedir
from swarmforge.layout import DAEMON_DIR
from tests.support import SWARMFORGE, VENV_BIN, Project, run_script


def _limit(size: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def swarmforge_on_full_disk(cwd: Path, size: int, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `swarmforge ARGS` where no file can grow past `size` bytes.

    Coverage is not carried into it: its data file could not be written either. Nor is
    bytecode written: a short write would leave a truncated cache behind.
    """
    return subprocess.run(
        [SWARMFORGE, *args],
        cwd=cwd,
        env={
            "PATH": f"{VENV_BIN}:/usr/bin:/bin",
            "HOME": "/nonexistent",
            "PYTHONDONTWRITEBYTECODE": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: _limit(size),
    )


def test_a_run_whose_report_cannot_be_written_names_the_file(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    # The report carries the task's output: a few kilobytes, past the limit.
    task = {"id": "a", "command": ["sh", "-c", "seq 1 2000"]}
    spec.write_text(json.dumps({"goal": "g", "tasks": [task]}))
    r = swarmforge_on_full_disk(tmp_path, 1500, "run", str(spec))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    reports = tmp_path / ".swarmforge" / "runs"
    progress, line = r.stderr.splitlines()
    assert progress.startswith("starting run ")
    assert line.startswith(f"swarmforge: {reports}/") and line.endswith(": File too large")
    assert "/reports/a." in line


def test_a_daemon_that_cannot_write_its_log_or_pid_file_says_so_once(project: Project) -> None:
    r = swarmforge_on_full_disk(project.root, 0, "daemon", "run", "--once")
    daemon = Path(statedir.path(str(project.root), DAEMON_DIR))  # named where it lies
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.splitlines() == [
        f"swarmforge: {daemon / 'handoffd.log'}: cannot write the log: File too large",
        f"swarmforge: {daemon / 'handoffd.pid'}: File too large",
    ]
    assert not (daemon / "handoffd.pid").exists()
    assert [p.name for p in daemon.iterdir() if p.name.endswith(".tmp")] == []


def test_a_daemon_whose_log_is_full_still_delivers(project: Project) -> None:
    # The pid file and the handoff's copy fit, the log's lines do not: delivery goes on.
    log = Path(statedir.path(str(project.root), DAEMON_DIR)) / "handoffd.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"x" * 1024)
    project.draft("coder", "type: note\nto: cleaner\npriority: 50\nmessage: m\n")
    queued = run_script("swarm_handoff.sh", project.tree("coder"), "coder", "draft.txt")
    assert queued.returncode == 0, queued.stderr
    r = swarmforge_on_full_disk(project.root, 1024, "daemon", "run", "--once")
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [f"swarmforge: {log}: cannot write the log: File too large"], (
        "said once, not once per line"
    )
    assert (r.returncode, r.stdout) == (0, "processed 1 file(s)\n")
