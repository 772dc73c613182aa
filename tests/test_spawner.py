"""The command spawner of planned runs: real child processes, real pipes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmforge.run import posixspawn
from swarmforge.run.spawner import TAIL, Child, Spawner


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


@pytest.fixture(params=["posix_spawn", "subprocess"])
def make(request: pytest.FixtureRequest) -> Callable[[], Spawner]:
    """Spawners of both kinds: through libc's posix_spawn, and the subprocess fallback."""
    if request.param == "posix_spawn" and not posixspawn.available():
        pytest.skip("this libc has no posix_spawn_file_actions_addchdir_np")
    return lambda: Spawner(native=request.param == "posix_spawn")


def test_children_run_in_their_directory_with_their_environment(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with make() as spawner:
        for name in ("a", "b"):
            script = 'pwd; echo "$WHO"; printf oops >&2; exit 3'
            spawner.start(name, sh(script), cwd=str(tmp_path / name), env={**ENV, "WHO": name})
        done = finish(spawner, 2)
    for name in ("a", "b"):
        child = done[name]
        assert bytes(child.out) == f"{tmp_path / name}\n{name}\n".encode()
        assert bytes(child.err) == b"oops" and child.code == 3 and child.error is None


def test_entries_of_each_command_replace_the_shared_ones(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    shared = {**ENV, "WHO": "everyone", "KEEP": "kept"}
    with make() as spawner:
        for name in ("a", "b", "c"):
            spawner.start(name, ["env"], cwd=str(tmp_path), env=shared, extra={"WHO": name})
        done = finish(spawner, 3)
    for name in ("a", "b", "c"):
        lines = bytes(done[name].out).decode().splitlines()
        assert [line for line in lines if line.startswith("WHO=")] == [f"WHO={name}"]
        assert "KEEP=kept" in lines and "PATH=/usr/bin:/bin" in lines


def test_stdin_is_empty_and_ignored_signals_are_reset(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    # Python ignores SIGPIPE; a child must get the default back, as with subprocess.
    script = "cat; grep SigIgn /proc/self/status"
    with make() as spawner:
        spawner.start("x", sh(script), cwd=str(tmp_path), env=ENV)
        child = finish(spawner, 1)["x"]
    ignored = int(bytes(child.out).split()[-1], 16)
    assert child.code == 0
    assert not ignored & (1 << (signal.SIGPIPE - 1)), "SIGPIPE still ignored in the child"


def test_only_the_tail_of_a_large_output_is_kept(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    size = 5 * TAIL + 123
    script = f"head -c {size} /dev/zero | tr '\\0' x; printf END"
    with make() as spawner:
        spawner.start("big", sh(script), cwd=str(tmp_path), env=ENV)
        child = finish(spawner, 1)["big"]
    assert child.code == 0
    assert TAIL <= len(child.out) <= 2 * TAIL
    assert bytes(child.out).endswith(b"xxxEND")


def test_a_command_that_cannot_start_is_reported_not_raised(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    with make() as spawner:
        spawner.start("missing", ["no-such-command-here"], cwd=str(tmp_path), env=ENV)
        spawner.start("nodir", ["true"], cwd=str(tmp_path / "gone"), env=ENV)
        done = finish(spawner, 2)
    assert isinstance(done["missing"].error, FileNotFoundError)
    assert done["nodir"].error is not None and done["nodir"].code is None


def test_a_child_that_closes_its_output_early_is_still_waited_for(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    with make() as spawner:
        spawner.start("late", sh("exec >&- 2>&-; sleep 0.5; exit 7"), cwd=str(tmp_path), env=ENV)
        started = time.monotonic()
        child = finish(spawner, 1)["late"]
    assert child.code == 7 and time.monotonic() - started >= 0.4


def test_many_children_each_finish_exactly_once(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    with make() as spawner:
        for n in range(200):
            spawner.start(n, sh(f"echo {n}"), cwd=str(tmp_path), env=ENV)
        done = finish(spawner, 200)
        assert spawner.wait(0.1) == []
    assert {k: bytes(c.out) for k, c in done.items()} == {n: f"{n}\n".encode() for n in range(200)}


def test_close_kills_and_reaps_what_still_runs(tmp_path: Path, make: Callable[[], Spawner]) -> None:
    spawner = make()
    spawner.start("slow", ["sleep", "30"], cwd=str(tmp_path), env=ENV)
    deadline = time.monotonic() + 10
    while not spawner.children:
        assert time.monotonic() < deadline
        spawner.wait(0.05)
    (pid,) = spawner.children
    spawner.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie left behind


@pytest.mark.skipif(not posixspawn.available(), reason="this libc has no addchdir_np")
def test_posix_spawn_reports_exec_failures_with_errno(tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        with pytest.raises(PermissionError):
            posixspawn.spawn(
                str(script), [str(script)], [], cwd=str(tmp_path), stdio=(devnull,) * 3
            )
    finally:
        os.close(devnull)


def test_a_command_that_moves_on_the_path_is_looked_up_again(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        tool = tmp_path / name / "tool"
        tool.write_text(f"#!/bin/sh\necho {name}\n")
        tool.chmod(0o755)
    env = {**ENV, "PATH": f"{tmp_path / 'first'}:{tmp_path / 'second'}:/usr/bin:/bin"}
    with make() as spawner:
        spawner.start(1, ["tool"], cwd=str(tmp_path), env=env)
        assert bytes(finish(spawner, 1)[1].out) == b"first\n"
        (tmp_path / "first" / "tool").unlink()
        spawner.start(2, ["tool"], cwd=str(tmp_path), env=env)
        assert bytes(finish(spawner, 1)[2].out) == b"second\n"


def test_no_descriptor_but_stdio_reaches_a_child(
    tmp_path: Path, make: Callable[[], Spawner]
) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    # Inheritable, as one handed down by a parent would be; high, so that nothing `ls`
    # opens itself takes its number.
    leaked = os.dup2(devnull, 250, inheritable=True)
    os.close(devnull)
    try:
        with make() as spawner:
            spawner.start("fds", ["ls", "/proc/self/fd"], cwd=str(tmp_path), env=ENV)
            child = finish(spawner, 1)["fds"]
    finally:
        os.close(leaked)
    fds = sorted(int(n) for n in bytes(child.out).split())
    assert fds[:3] == [0, 1, 2] and str(leaked).encode() not in bytes(child.out).split()


def test_running_out_of_descriptors_fails_commands_without_stranding_any(tmp_path: Path) -> None:
    script = f"""
import os, resource, sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
from swarmforge.run.spawner import Spawner
spawner = Spawner()
used = len(os.listdir("/proc/self/fd"))
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
