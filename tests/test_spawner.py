"""The command spawner of planned runs: real child processes, real pipes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swarmforge.run.report.markdown import TAIL
from swarmforge.run.spawned import Child
from swarmforge.run.spawner import Spawner


def finish(spawner: Spawner, count: int, timeout: float = 20.0) -> dict[object, Child]:
    """Wait until `count` children have finished; them by key."""
    done: dict[object, Child] = {}
    deadline = time.monotonic() + timeout
    while len(done) < count:
        assert time.monotonic() < deadline, f"only {len(done)} of {count} finished"
        done.update((c.key, c) for c in spawner.wait(0.5))
    return done


def sh(script: str) -> list[str]:
    return ["sh", "-c", script]


ENV = {"PATH": "/usr/bin:/bin", "LANG": "C"}


def test_children_run_in_their_directory_with_their_environment(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with Spawner() as spawner:
        for name in ("a", "b"):
            script = 'pwd; echo "$WHO"; printf oops >&2; exit 3'
            spawner.start(name, sh(script), cwd=str(tmp_path / name), env={**ENV, "WHO": name})
        done = finish(spawner, 2)
    for name in ("a", "b"):
        child = done[name]
        assert bytes(child.out) == f"{tmp_path / name}\n{name}\n".encode()
        assert bytes(child.err) == b"oops" and child.code == 3 and child.error is None


def test_entries_of_each_command_replace_the_shared_ones(tmp_path: Path) -> None:
    shared = {**ENV, "WHO": "everyone", "KEEP": "kept"}
    with Spawner() as spawner:
        for name in ("a", "b", "c"):
            spawner.start(name, ["env"], cwd=str(tmp_path), env=shared, extra={"WHO": name})
        done = finish(spawner, 3)
    for name in ("a", "b", "c"):
        lines = bytes(done[name].out).decode().splitlines()
        assert [line for line in lines if line.startswith("WHO=")] == [f"WHO={name}"]
        assert "KEEP=kept" in lines and "PATH=/usr/bin:/bin" in lines


def test_stdin_is_empty_and_ignored_signals_are_reset(tmp_path: Path) -> None:
    # Python ignores SIGPIPE; a child must get the default back, as with subprocess:
    # then `yes` dies of SIGPIPE (128 + 13) once `head` has gone, instead of failing
    # with EPIPE (1).
    script = "cat; (yes; echo $? >&2) | head -c 1 >/dev/null"
    with Spawner() as spawner:
        spawner.start("x", sh(script), cwd=str(tmp_path), env=ENV)
        child = finish(spawner, 1)["x"]
    assert child.code == 0 and bytes(child.out) == b""
    assert bytes(child.err).strip() == str(128 + signal.SIGPIPE).encode(), "SIGPIPE ignored"


def test_only_the_tail_of_a_large_output_is_kept(tmp_path: Path) -> None:
    size = 5 * TAIL + 123
    script = f"head -c {size} /dev/zero | tr '\\0' x; printf END"
    with Spawner() as spawner:
        spawner.start("big", sh(script), cwd=str(tmp_path), env=ENV)
        child = finish(spawner, 1)["big"]
    assert child.code == 0
    assert TAIL <= len(child.out) <= 2 * TAIL
    assert bytes(child.out).endswith(b"xxxEND")


def test_a_command_that_cannot_start_is_reported_not_raised(tmp_path: Path) -> None:
    with Spawner() as spawner:
        spawner.start("missing", ["no-such-command-here"], cwd=str(tmp_path), env=ENV)
        spawner.start("nodir", ["true"], cwd=str(tmp_path / "gone"), env=ENV)
        done = finish(spawner, 2)
    assert isinstance(done["missing"].error, FileNotFoundError)
    assert done["nodir"].error is not None and done["nodir"].code is None


def test_a_child_that_closes_its_output_early_is_still_waited_for(tmp_path: Path) -> None:
    with Spawner() as spawner:
        spawner.start("late", sh("exec >&- 2>&-; sleep 0.5; exit 7"), cwd=str(tmp_path), env=ENV)
        started = time.monotonic()
        child = finish(spawner, 1)["late"]
    assert child.code == 7 and time.monotonic() - started >= 0.4


def test_many_children_each_finish_exactly_once(tmp_path: Path) -> None:
    with Spawner() as spawner:
        for n in range(200):
            spawner.start(n, sh(f"echo {n}"), cwd=str(tmp_path), env=ENV)
        done = finish(spawner, 200)
        assert spawner.wait(0.1) == []
    assert {k: bytes(c.out) for k, c in done.items()} == {n: f"{n}\n".encode() for n in range(200)}


def test_close_kills_and_reaps_what_still_runs(tmp_path: Path) -> None:
    spawner = Spawner()
    spawner.start("slow", ["sleep", "30"], cwd=str(tmp_path), env=ENV)
    deadline = time.monotonic() + 10
    while not spawner.children:
        assert time.monotonic() < deadline
        spawner.wait(0.05)
    (pid,) = spawner.children
    spawner.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie left behind


def test_a_file_that_cannot_be_executed_is_reported_with_its_errno(tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    with Spawner() as spawner:
        spawner.start("x", [str(script)], cwd=str(tmp_path), env=ENV)
        child = finish(spawner, 1)["x"]
    assert isinstance(child.error, PermissionError) and child.code is None


def test_a_command_that_moves_on_the_path_is_looked_up_again(tmp_path: Path) -> None:
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        tool = tmp_path / name / "tool"
        tool.write_text(f"#!/bin/sh\necho {name}\n")
        tool.chmod(0o755)
    env = {**ENV, "PATH": f"{tmp_path / 'first'}:{tmp_path / 'second'}:/usr/bin:/bin"}
    with Spawner() as spawner:
        spawner.start(1, ["tool"], cwd=str(tmp_path), env=env)
        assert bytes(finish(spawner, 1)[1].out) == b"first\n"
        (tmp_path / "first" / "tool").unlink()
        spawner.start(2, ["tool"], cwd=str(tmp_path), env=env)
        assert bytes(finish(spawner, 1)[2].out) == b"second\n"


OPEN_FDS = """
import os
for fd in range(300):
    try:
        os.fstat(fd)
    except OSError:
        continue
    print(fd)
"""


def test_no_descriptor_but_stdio_reaches_a_child(tmp_path: Path) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    # Inheritable, as one handed down by a parent would be; high, so that nothing the
    # child opens itself takes its number.
    leaked = os.dup2(devnull, 250, inheritable=True)
    os.close(devnull)
    try:
        with Spawner() as spawner:
            spawner.start("fds", [sys.executable, "-c", OPEN_FDS], cwd=str(tmp_path), env=ENV)
            child = finish(spawner, 1)["fds"]
    finally:
        os.close(leaked)
    fds = [int(n) for n in bytes(child.out).split()]
    assert child.code == 0 and fds[:3] == [0, 1, 2] and leaked not in fds


def test_running_out_of_descriptors_fails_commands_without_stranding_any(tmp_path: Path) -> None:
    script = f"""
import os, resource, sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
from swarmforge.run.spawner import Spawner
spawner = Spawner()
used = len(os.listdir("/dev/fd"))
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (used + 12, hard))
for n in range(20):
    spawner.start(n, ["sleep", "0.3"], cwd={str(tmp_path)!r}, env={{"PATH": "/usr/bin:/bin"}})
ended, deadline = {{}}, time.monotonic() + 30
while len(ended) < 20 and time.monotonic() < deadline:
    ended.update((c.key, c) for c in spawner.wait(0.2))
spawner.close()
ok = sum(c.code == 0 for c in ended.values())
failed = sum(c.error is not None for c in ended.values())
print(len(ended), ok, failed)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    count, ok, failed = map(int, done.stdout.split())
    assert count == 20 and ok + failed == 20 and ok >= 1 and failed >= 1


def test_no_variable_that_locates_a_repository_reaches_a_command(tmp_path: Path) -> None:
    shared = {**ENV, "GIT_DIR": "/elsewhere/.git", "GIT_WORK_TREE": "/elsewhere", "GIT_PAGER": "x"}
    with Spawner() as spawner:
        spawner.start("env", ["env"], cwd=str(tmp_path), env=shared, extra={"MARK": "1"})
        lines = bytes(finish(spawner, 1)["env"].out).decode().splitlines()
    assert not [line for line in lines if line.startswith(("GIT_DIR=", "GIT_WORK_TREE="))]
    assert "GIT_PAGER=x" in lines and "MARK=1" in lines
