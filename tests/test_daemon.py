"""handoffd as a process: lifecycle, event-driven delivery, crash safety, wake-ups."""

from __future__ import annotations

import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from swarmforge.daemon import wake
from swarmforge.daemon.arrivals import Arrivals
from swarmforge.daemon.dispatcher import Dispatcher
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import running_pid
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box
from swarmforge.tmux.server import project_socket
from tests.support import VENV_BIN, Project, retry_until
from tests.support import queue_note as send
from tests.support import run_cli as sf

ROLES = {"coder": "task", "cleaner": "task", "qa": "batch", "architect": "task"}
RECIPIENTS = ("cleaner", "qa", "architect")


@pytest.fixture
def swarm(repo: Path) -> Project:
    return Project(repo, ROLES)


@pytest.fixture
def daemon(swarm: Project):  # type: ignore[no-untyped-def]
    r = sf("daemon", "start", "--notify", "none", cwd=swarm.root)
    assert r.returncode == 0, r.stderr
    yield int(r.stdout.split("pid ")[1].rstrip(")\n"))
    sf("daemon", "stop", "--project", str(swarm.root), cwd=swarm.root)


def test_start_is_idempotent_detached_and_stop_waits_until_gone(swarm: Project) -> None:
    started = time.monotonic()
    # Output captured through pipes: if the daemon kept them open this would hang.
    first = sf("daemon", "start", "--notify", "none", cwd=swarm.root)
    assert first.returncode == 0 and first.stdout.startswith("handoffd started (pid ")
    assert time.monotonic() - started < 20
    pid = int(first.stdout.split("pid ")[1].rstrip(")\n"))
    again = sf("daemon", "start", cwd=swarm.root)
    assert (again.returncode, again.stdout) == (0, f"handoffd already running (pid {pid})\n")
    paths = Paths(str(swarm.root))
    assert Path(paths.pid).read_text() == f"{pid}\n"
    status = sf("daemon", "status", "--json", cwd=swarm.root)
    assert status.returncode == 0 and f'"pid": {pid}' in status.stdout
    # A second daemon in the foreground is refused: one per project, by lock.
    second = sf("daemon", "run", "--project", str(swarm.root), cwd=swarm.root)
    assert second.returncode == 1 and "already running" in second.stderr
    stop = sf("daemon", "stop", cwd=swarm.root)
    assert (stop.returncode, stop.stdout) == (0, f"handoffd stopped (pid {pid})\n")
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not Path(paths.pid).exists() and not Path(paths.stop).exists()
    assert sf("daemon", "status", cwd=swarm.root).returncode == 3
    assert sf("daemon", "stop", cwd=swarm.root).stdout == "handoffd was not running\n"


def test_delivers_on_events_and_follows_roles_tsv(swarm: Project, daemon: int) -> None:
    path = send(swarm, "coder", "cleaner,qa", "first")
    name = Path(path).name
    retry_until(lambda: (swarm.box("coder", Box.SENT) / name).exists())
    assert swarm.names("cleaner", Box.NEW) == [name] == swarm.names("qa", Box.NEW)
    # A role added while the daemon runs is watched from then on.
    tree = swarm.root / ".worktrees" / "ops"
    from tests.support import git

    git(swarm.root, "worktree", "add", "-q", "-b", "swarm/test/ops", str(tree))
    roles_tsv = swarm.root / ".swarmforge" / "roles.tsv"
    row = f"ops\tops\t{tree}\tswarmforge-ops\tOps\tcodex\ttask\n"
    tmp = roles_tsv.with_suffix(".new")
    tmp.write_text(roles_tsv.read_text() + row)
    tmp.replace(roles_tsv)
    swarm.roles["ops"] = "task"
    retry_until(lambda: "ops" in (Path(Paths(str(swarm.root)).log).read_text()))
    sent = send(swarm, "ops", "coder", "from ops")
    retry_until(lambda: swarm.names("coder", Box.NEW) == [Path(sent).name])


def test_sigterm_removes_the_pid_file(swarm: Project, daemon: int) -> None:
    os.kill(daemon, signal.SIGTERM)
    retry_until(lambda: running_pid(Paths(str(swarm.root))) is None)
    assert not Path(Paths(str(swarm.root)).pid).exists()


def test_the_stop_file_stops_it(swarm: Project, daemon: int) -> None:
    Path(Paths(str(swarm.root)).stop).write_text("")
    retry_until(lambda: running_pid(Paths(str(swarm.root))) is None, timeout=15)


def test_a_stale_pid_file_of_a_dead_daemon_never_blocks_a_start(swarm: Project) -> None:
    paths = Paths(str(swarm.root))
    Path(paths.dir).mkdir(parents=True)
    zombie = subprocess.Popen(["true"])  # exits at once and stays unreaped: a zombie
    retry_until(lambda: psutil.Process(zombie.pid).status() == psutil.STATUS_ZOMBIE)
    Path(paths.pid).write_text(f"{zombie.pid}\n")
    assert sf("daemon", "status", cwd=swarm.root).returncode == 3
    r = sf("daemon", "start", "--notify", "none", cwd=swarm.root)
    assert r.returncode == 0 and r.stdout.startswith("handoffd started")
    assert sf("daemon", "stop", cwd=swarm.root).returncode == 0
    zombie.wait()


def test_once_delivers_what_is_there(swarm: Project) -> None:
    for i in range(3):
        send(swarm, "coder", "qa", f"m{i}", f"d{i}")
    r = sf(
        "daemon",
        "run",
        "--once",
        "--notify",
        "none",
        "--json",
        "--project",
        str(swarm.root),
        cwd=swarm.root,
    )
    assert r.returncode == 0 and '"delivered": 3' in r.stdout
    assert len(swarm.names("qa", Box.NEW)) == 3


def test_a_polling_watcher_still_wakes_delivery(swarm: Project) -> None:
    """Where the system offers no event source the daemon polls, and still delivers on wake."""
    paths = Paths(str(swarm.root))
    dispatcher = Dispatcher(str(swarm.root), wake.Waker(), logging.getLogger("test-polling"))
    dispatcher.load_roles()
    arrivals = Arrivals(dispatcher.changed, inotify=False, native=False)
    arrivals.start()
    delivered: list[tuple[str, str]] = []

    def woken_and_delivered() -> bool:
        # One turn of the daemon's loop, except that only a wake-up runs a pass here.
        if dispatcher.changed.wait(0.05):
            delivered.extend((o.name, o.status) for o in dispatcher.run_once())
        return bool(delivered)

    try:
        # What the daemon watches, as handoffd's loop gives it.
        arrivals.watch([*dispatcher.outboxes(), str(Path(paths.roles).parent), paths.dir])
        assert dispatcher.run_once() == []
        name = Path(send(swarm, "coder", "qa,cleaner", "polled")).name
        retry_until(woken_and_delivered)
        assert delivered == [(name, "delivered")]
        assert swarm.names("qa", Box.NEW) == [name] == swarm.names("cleaner", Box.NEW)
        assert (swarm.box("coder", Box.SENT) / name).exists()
    finally:
        arrivals.stop()
        dispatcher.changed.close()


def outbox_names(swarm: Project) -> set[str]:
    return {n for n in swarm.names("coder", Box.OUTBOX) if n.endswith(".handoff")}


@pytest.mark.slow
def test_sigkill_at_random_moments_never_loses_doubles_or_shows_a_partial_copy(
    swarm: Project,
) -> None:
    bodies = {}
    for i in range(200):
        path = send(swarm, "coder", ",".join(RECIPIENTS), f"broadcast {i}", f"d{i}")
        bodies[Path(path).name] = message.read(path).body
    partial: list[str] = []
    done = threading.Event()

    def watch_inboxes() -> None:
        # Read every copy the moment it is visible: it must already be complete.
        while not done.is_set():
            for role in RECIPIENTS:
                new = swarm.box(role, Box.NEW)
                for arrived in new.iterdir() if new.exists() else []:
                    name = arrived.name
                    if not name.endswith(".handoff"):
                        continue
                    try:
                        copy = message.read(str(arrived))
                    except FileNotFoundError:
                        continue
                    except Exception as exc:
                        partial.append(f"{role}/{name}: {exc}")
                        continue
                    if copy.body != bodies[name] or copy.get("recipient") != role:
                        partial.append(f"{role}/{name}: incomplete")

    checker = threading.Thread(target=watch_inboxes, daemon=True)
    checker.start()
    rng = random.Random(20261130)
    env = {**os.environ, "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    kills = interrupted = 0
    try:
        while outbox_names(swarm) and kills < 40:
            before = len(swarm.names("coder", Box.SENT))
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "swarmforge",
                    "daemon",
                    "run",
                    "--notify",
                    "none",
                    "--project",
                    str(swarm.root),
                ],
                env=env,
            )
            target = before + rng.randint(1, 12)
            deadline = time.monotonic() + 20
            while (
                len(swarm.names("coder", Box.SENT)) < target
                and time.monotonic() < deadline
                and outbox_names(swarm)
            ):
                time.sleep(rng.uniform(0, 0.003))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            interrupted += any(
                sum((swarm.box(r, Box.NEW) / n).exists() for r in RECIPIENTS) > 0
                for n in outbox_names(swarm)
            )
        final = subprocess.run(
            [
                sys.executable,
                "-m",
                "swarmforge",
                "daemon",
                "run",
                "--once",
                "--notify",
                "none",
                "--project",
                str(swarm.root),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert final.returncode == 0, final.stderr
    finally:
        done.set()
        checker.join()
    assert kills >= 10
    print(f"{kills} kills, {interrupted} in the middle of a broadcast")
    assert partial == []
    assert outbox_names(swarm) == set()
    assert set(swarm.names("coder", Box.SENT)) == set(bodies)
    for role in RECIPIENTS:
        names = swarm.names(role, Box.NEW)
        assert [n for n in names if n.endswith(".handoff")] == sorted(bodies), role
        assert all(not n.startswith(".") for n in names), "temporary copies were swept"
        for name in names:
            copy = message.read(str(swarm.box(role, Box.NEW) / name))
            assert copy.body == bodies[name] and copy.get("recipient") == role
            assert copy.get("enqueued_at")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tmux_wakes_an_interactive_agent(swarm: Project, tmp_path: Path) -> None:
    socket = project_socket(str(swarm.root))
    heard = tmp_path / "heard.txt"
    agent = f"import sys\nfor line in sys.stdin:\n    open({str(heard)!r}, 'a').write(line)\n"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run(
        [*tmux, "new-session", "-d", "-s", "swarmforge-qa", sys.executable, "-c", agent], check=True
    )
    try:
        r = sf("daemon", "start", "--notify", "tmux", cwd=swarm.root)
        assert r.returncode == 0, r.stderr
        send(swarm, "coder", "qa,cleaner", "wake up")
        retry_until(lambda: heard.exists() and wake.WAKE_LINE in heard.read_text())
        assert heard.read_text() == wake.WAKE_LINE + "\n"
        log = Path(Paths(str(swarm.root)).log).read_text()
        assert "delivered" in log and "failed" not in log  # cleaner has no session: skipped
    finally:
        sf("daemon", "stop", cwd=swarm.root)
        subprocess.run([*tmux, "kill-server"], check=False)


def test_a_failing_wake_up_is_retried_and_never_undoes_delivery(
    swarm: Project, tmp_path: Path
) -> None:
    calls = tmp_path / "calls"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$SWARMFORGE_ROLE" >> {calls}\nexit 1\n')
    hook.chmod(0o755)
    r = sf("daemon", "start", "--notify", "command", "--notify-command", str(hook), cwd=swarm.root)
    assert r.returncode == 0, r.stderr
    try:
        path = send(swarm, "coder", "qa", "hello")
        name = Path(path).name
        retry_until(lambda: calls.exists() and len(calls.read_text().split()) >= 2)
        assert swarm.names("qa", Box.NEW) == [name]
        assert (swarm.box("coder", Box.SENT) / name).exists()
        assert "waking qa failed" in Path(Paths(str(swarm.root)).log).read_text()
    finally:
        sf("daemon", "stop", cwd=swarm.root)
