"""handoffd under pressure: racing starts and stops, a careless umask, killed writers."""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from swarmforge import filewrite
from swarmforge.daemon import wake
from swarmforge.daemon.dispatcher import Dispatcher
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import running_pid
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff.mailbox import Box
from swarmforge.locks import FileLock, HeldMarker, is_held
from tests.support import BIN, SWARMFORGE, VENV_BIN, Project, retry_until, script_env
from tests.support import queue_note as send
from tests.support import run_cli as sf


@pytest.fixture
def swarm(repo: Path) -> Project:
    return Project(repo, {"coder": "task", "cleaner": "task", "qa": "batch"})


def daemon_processes(root: Path) -> list[psutil.Process]:
    """Live daemons of the project at `root`, including any still waiting for the lock."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        cmdline = process.info["cmdline"] or []
        if (
            "daemon" in cmdline
            and "run" in cmdline
            and str(root) in cmdline
            and process.info["status"] != psutil.STATUS_ZOMBIE
        ):
            found.append(process)
    return found


@pytest.mark.slow
def test_stop_leaves_no_daemon_after_racing_starts(swarm: Project) -> None:
    paths = Paths(str(swarm.root))
    with ThreadPoolExecutor(max_workers=3) as pool:
        for _ in range(10):
            starts = list(
                pool.map(
                    lambda _: sf("daemon", "start", "--notify", "none", cwd=swarm.root), range(3)
                )
            )
            assert [r.returncode for r in starts] == [0, 0, 0], [r.stderr for r in starts]
            pids = {r.stdout.split("pid ")[1].rstrip(")\n") for r in starts}
            assert len(pids) == 1, [r.stdout for r in starts]
            assert sum(r.stdout.startswith("handoffd started") for r in starts) == 1
            stop = sf("daemon", "stop", cwd=swarm.root)
            assert stop.returncode == 0, stop.stderr
            assert running_pid(paths) is None
            assert daemon_processes(swarm.root) == []
            assert not Path(paths.stop).exists() and not Path(paths.pid).exists()


def test_a_daemon_that_gets_the_lock_during_a_stop_gives_way(swarm: Project) -> None:
    paths = Paths(str(swarm.root))
    send(swarm, "coder", "qa")
    once = ["daemon", "run", "--once", "--notify", "none", "--json"]
    with HeldMarker(paths.stop):
        r = sf(*once, cwd=swarm.root)
        assert r.returncode == 0 and '"delivered": 0' in r.stdout
        assert Path(paths.stop).exists(), "the stop in progress keeps its file"
        assert swarm.names("qa", Box.NEW) == []
    assert not Path(paths.stop).exists()
    # A stop file nobody holds (a stop that was killed, or one written by hand) is stale.
    Path(paths.stop).write_text("stop\n")
    r = sf(*once, cwd=swarm.root)
    assert r.returncode == 0 and '"delivered": 1' in r.stdout
    assert not Path(paths.stop).exists()


def test_a_second_daemon_is_refused_at_once_but_never_by_a_status_probe(tmp_path: Path) -> None:
    path = str(tmp_path / "d" / "x.lock")
    with FileLock(path, "the first"):
        started = time.monotonic()
        with pytest.raises(SwarmforgeError, match="the second is already running"):
            FileLock(path, "the second", patience=0).__enter__()
        assert time.monotonic() - started < 0.5
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            is_held(path)

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        for _ in range(200):
            with FileLock(path, "a daemon", patience=0):
                assert is_held(path)
    finally:
        done.set()
        prober.join()


def modes(top: Path) -> dict[str, int]:
    found = {}
    for directory, dirs, files in os.walk(top):
        for name in [*dirs, *files]:
            path = Path(directory, name)
            st = path.lstat()
            if not stat.S_ISLNK(st.st_mode):
                found[str(path)] = stat.S_IMODE(st.st_mode)
    found[str(top)] = stat.S_IMODE(top.stat().st_mode)
    return found


def helper(swarm: Project, role: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / script), *args],
        cwd=swarm.tree(role),
        env=script_env(role),
        capture_output=True,
        text=True,
        timeout=60,
        umask=0,
    )


def daemon(swarm: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SWARMFORGE, "daemon", *args],
        cwd=swarm.root,
        env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"},
        capture_output=True,
        text=True,
        timeout=60,
        umask=0,
    )


def test_state_is_never_writable_by_others_even_under_umask_0(swarm: Project) -> None:
    swarm.draft("coder", "type: note\nto: cleaner,qa\npriority: 50\nmessage: m\n", "d")
    assert helper(swarm, "coder", "swarm_handoff.sh", "d").returncode == 0
    assert daemon(swarm, "start", "--notify", "none").returncode == 0
    retry_until(lambda: len(swarm.names("qa", Box.NEW)) == 1)
    assert daemon(swarm, "stop").returncode == 0
    assert helper(swarm, "cleaner", "ready_for_next.sh").returncode == 0
    assert helper(swarm, "cleaner", "done_with_current.sh").returncode == 0
    assert helper(swarm, "qa", "ready_for_next.sh").returncode == 0
    assert swarm.mailbox("qa").batches(), "a batch directory was made"
    found: dict[str, int] = {}
    for role in ("coder", "cleaner", "qa"):
        found.update(modes(swarm.tree(role) / ".swarmforge"))
    found.update(modes(swarm.root / ".swarmforge" / "daemon"))
    shared = {path: oct(mode) for path, mode in found.items() if mode & 0o022}
    assert shared == {}
    assert len(found) > 25


def test_state_an_older_version_left_open_to_others_is_narrowed_on_use(swarm: Project) -> None:
    made = []
    used = [("coder", Box.OUTBOX_TMP)]
    used += [("cleaner", box) for box in (Box.NEW, Box.IN_PROCESS, Box.COMPLETED)]
    for role, box in used:
        directory = swarm.box(role, box)
        directory.mkdir(parents=True, exist_ok=True)
        made += [directory, *directory.parents]
    daemon_dir = swarm.root / ".swarmforge" / "daemon"
    daemon_dir.mkdir()
    made = [p for p in {*made, daemon_dir} if ".swarmforge" in p.parts]
    for directory in made:
        directory.chmod(0o777)
    swarm.draft("coder", "type: note\nto: cleaner\npriority: 50\nmessage: m\n", "d")
    assert helper(swarm, "coder", "swarm_handoff.sh", "d").returncode == 0
    assert daemon(swarm, "start", "--notify", "none").returncode == 0
    retry_until(lambda: len(swarm.names("cleaner", Box.NEW)) == 1)
    assert daemon(swarm, "stop").returncode == 0
    assert helper(swarm, "cleaner", "ready_for_next.sh").returncode == 0
    assert {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in made} == {
        str(p): "0o755" for p in made
    }


KILLED_WRITER = """
import os, sys
from swarmforge import filewrite
for path in sys.argv[1:]:
    filewrite.write_new(filewrite.temp_name(path), b"half")
os.kill(os.getpid(), 9)
"""


@pytest.mark.parametrize("sweeper", ["daemon", "gc"])
def test_what_killed_writers_left_is_swept_and_nothing_of_the_living(
    swarm: Project, sweeper: str
) -> None:
    send(swarm, "coder", "qa")  # makes the coder's mailbox
    coder = swarm.mailbox("coder")
    swarm.mailbox("qa").ensure(Box.NEW, Box.IN_PROCESS)
    places = [
        coder.path(Box.OUTBOX_TMP, "50_x.handoff"),  # the gate, killed while installing
        str(Path(coder.root) / "sequence"),  # the gate, killed while counting
        swarm.mailbox("qa").path(Box.IN_PROCESS, "50_y.handoff"),  # a helper, killed stamping
        swarm.mailbox("qa").path(Box.NEW, "50_z.handoff"),  # the daemon, killed copying
    ]
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, *places], check=False)
    assert killed.returncode == -signal.SIGKILL
    dead = sorted(
        entry
        for p in places
        for entry in Path(p).parent.iterdir()
        if entry.name.startswith(".") and entry.name.endswith(".tmp")
    )
    assert len(dead) == 4
    # A file a live process is still writing is never touched.
    alive = filewrite.temp_name(coder.path(Box.OUTBOX_TMP, "50_w.handoff"))
    filewrite.write_new(alive, b"being written")
    if sweeper == "gc":
        # With no daemon running: gc sweeps the same places.
        report = json.loads(sf("gc", "--json", cwd=swarm.root).stdout)
        assert report["temporary_files"] == 4
    else:
        log = logging.getLogger(f"test-sweep-{id(swarm)}")
        daemon = Dispatcher(str(swarm.root), wake.Waker(), log)
        daemon.load_roles()
        try:
            assert daemon.sweep() == 4
        finally:
            daemon.changed.close()
    assert not any(p.exists() for p in dead)
    assert Path(alive).exists()
    assert (Path(coder.root) / "sequence").read_text() == "000001\n"


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_file_that_can_be_neither_delivered_nor_failed_is_logged_once(swarm: Project) -> None:
    good = send(swarm, "coder", "qa")
    outbox = Path(good).parent
    stuck = outbox / "50_20260101T000000Z_000009_from_coder_to_qa.handoff"
    stuck.write_bytes(b"not a handoff\n")
    failed = swarm.box("coder", Box.FAILED)
    failed.rmdir()
    failed.write_text("in the way of failed/\n")  # failed/ cannot be made
    records = Records()
    log = logging.getLogger(f"test-stuck-{id(swarm)}")
    log.addHandler(records)
    log.propagate = False
    daemon = Dispatcher(str(swarm.root), wake.Waker(), log)
    try:
        for _ in range(3):
            daemon.run_once()
    finally:
        daemon.changed.close()
    # A failed/ that is no directory makes the whole outbox unsafe: left alone, said once.
    stuck_lines = [line for line in records.lines if "leaving the outbox" in line]
    assert len(stuck_lines) == 1, records.lines
    assert str(failed) in stuck_lines[0] and "UNSAFE_MAILBOX" in stuck_lines[0]
    assert swarm.names("qa", Box.NEW) == []
    assert stuck.exists() and Path(good).exists()
    assert stuck.exists()


def test_a_log_left_writable_by_others_is_narrowed_and_a_fifo_log_refused(
    swarm: Project,
) -> None:
    paths = Paths(str(swarm.root))
    log = Path(paths.log)
    Path(paths.dir).mkdir(parents=True)
    log.write_text("old\n")
    log.chmod(0o666)
    assert daemon(swarm, "run", "--once", "--notify", "none").returncode == 0
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert log.read_text().startswith("old\n")
    log.unlink()
    os.mkfifo(log)
    r = daemon(swarm, "start", "--notify", "none")
    assert r.returncode == 1
    assert r.stderr.startswith(f"{paths.log} is a FIFO, not a regular file.")
    assert running_pid(paths) is None
