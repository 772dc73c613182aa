"""Two `up`s, or `up` and `down`, at the same instant end with one consistent session.

Each command runs as a real `swarmforge` process that has imported everything and waits
on a pipe; closing the pipe lets them all go at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

from swarmforge import tagging
from swarmforge.config import sessionrecord
from tests.support import SWARMFORGE, VENV_BIN, make_swarm, nothing_left, retry_until
from tests.support import run_cli as sf

CONF = "".join(f"window {n} exec {n} task sh -c 'cat > got.txt'\n" for n in ("aw", "bw"))
AT_ONCE = (
    "import os, sys\n"
    "from swarmforge.cli import main\n"
    "os.read(int(sys.argv[1]), 1)\n"
    "sys.exit(main(sys.argv[2:]))\n"
)
BUSY = "Another swarmforge up, down or gc of this project is already running"


def at_once(repo: Path, *commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    """Run the `swarmforge` commands together, released by one closed pipe; their results."""
    gate, release = os.pipe()
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"}
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    started = [
        subprocess.Popen(
            [sys.executable, "-c", AT_ONCE, str(gate), *args],
            cwd=repo,
            env=env,
            pass_fds=(gate,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    os.close(gate)
    os.close(release)  # every reader of `gate` sees its end together
    results = []
    for child, args in zip(started, commands, strict=True):
        out, err = child.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(args, child.returncode, out, err))
    return results


def refused(result: subprocess.CompletedProcess[str]) -> bool:
    """True if the command was turned away, in one line, because the other one ran."""
    if result.returncode == 0:
        return False
    assert result.stderr.strip().splitlines() == [result.stderr.strip()], result.stderr
    assert result.stderr.startswith(BUSY), result.stderr
    return True


def running_as_recorded(repo: Path) -> sessionrecord.SessionRecord:
    """The one running session: its runner and role processes alive, no other run's."""
    record = sessionrecord.load(str(repo))
    assert record is not None and record.state == "running"
    pids = [record.runner_pid, *(role.pid for role in record.roles)]
    assert all(pid is not None and psutil.pid_exists(pid) for pid in pids), pids
    others = {p.pid for p in tagging.tagged(str(repo))} - {
        p.pid for p in tagging.tagged(str(repo), record.run_id)
    }
    assert others == set()
    return record


def test_two_ups_at_once_start_one_session(repo: Path) -> None:
    make_swarm(repo, CONF)
    try:
        results = at_once(repo, ["up", "--backend", "headless"], ["up", "--backend", "headless"])
        record = running_as_recorded(repo)
        started = [r for r in results if not refused(r)]
        assert started, [r.stderr for r in results]
        said = {r.stdout.splitlines()[0] for r in started}
        assert said <= {
            f"swarm {record.run_id} running (headless)",
            f"swarm {record.run_id} already running (headless)",
        }
        assert len(said) == len(started)  # one started it, the other found it running
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_up_and_down_at_once_leave_one_consistent_session(repo: Path) -> None:
    make_swarm(repo, CONF)
    try:
        up, down = at_once(repo, ["up", "--backend", "headless"], ["down"])
        assert not (refused(up) and refused(down))
        record = sessionrecord.load(str(repo))
        assert record is not None
        if record.state == "running":
            running_as_recorded(repo)
        else:
            assert tagging.tagged(str(repo)) == []
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_up_down_and_gc_during_an_up_are_refused_and_stop_nothing(repo: Path) -> None:
    make_swarm(repo, "window aw exec aw task sh -c 'cat > got.txt'\n")
    entered, go = repo.parent / "entered", repo.parent / "go"
    os.mkfifo(go)
    # A worktree's setup that holds `up` half-way until the test lets it go on.
    setup = f"touch {entered}; read line < {go}"
    (repo / "swarmforge" / "swarmforge.toml").write_text(f"[bootstrap]\nsetup = ['{setup}']\n")
    first = subprocess.Popen(
        [SWARMFORGE, "up", "--backend", "headless"],
        cwd=repo,
        env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        retry_until(entered.exists, timeout=60)
        results = at_once(repo, ["down"], ["up", "--backend", "headless"], ["gc"])
        assert all(refused(r) for r in results)
        with go.open("w") as release:
            release.write("go\n")
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        record = running_as_recorded(repo)
        assert out.startswith(f"swarm {record.run_id} running (headless)")
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        sf("down", cwd=repo)
    nothing_left(repo)
