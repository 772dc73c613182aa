"""The process module: its shapes, its environment policy end to end, and the host fallbacks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from swarmforge import host, tagging
from swarmforge.config import sessionrecord
from swarmforge.errors import SwarmforgeError
from swarmforge.proc import detach, liveness, policy, popen, spawn
from tests.support import SWARMFORGE, VENV_BIN, completed, git, kick, make_swarm, retry_until

REPO = Path(__file__).resolve().parents[1]


def env_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_the_policy_drops_what_git_itself_calls_repository_local() -> None:
    listed = subprocess.run(
        ["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert listed and set(listed) <= policy.LOCAL_GIT_VARS


def test_environment_drops_local_variables_and_adds_the_callers() -> None:
    made = policy.environment(
        {"GIT_DIR": "/x", "GIT_INDEX_FILE": "/i", "GIT_AUTHOR_NAME": "a", "HOME": "/h"},
        {"SWARMFORGE_RUN_ID": "r", "GIT_INDEX_FILE": "/scratch"},
    )
    assert made == {
        "GIT_AUTHOR_NAME": "a",
        "HOME": "/h",
        "SWARMFORGE_RUN_ID": "r",
        "GIT_INDEX_FILE": "/scratch",
    }
    # Made by the policy already: what the caller added on purpose stays.
    assert policy.environment(made)["GIT_INDEX_FILE"] == "/scratch"


def test_the_stdio_constants_are_the_subprocess_modules() -> None:
    assert (popen.PIPE, popen.STDOUT, popen.DEVNULL) == (
        subprocess.PIPE,
        subprocess.STDOUT,
        subprocess.DEVNULL,
    )


SHAPES = """
import json, os, sys, time
from swarmforge.proc import detach, popen, spawn
out, log = sys.argv[1], sys.argv[2]
seen = {"run": spawn.run(["env"]).stdout.decode()}
seen["output"] = popen.output(["env"], cwd=out, extra={"MARK": "output"}).stdout.decode()
child = popen.start(["env"], cwd=out, stdout=popen.PIPE, extra={"MARK": "start"})
seen["start"] = child.communicate()[0].decode()
fd = os.open(log, os.O_WRONLY | os.O_CREAT, 0o600)
script = "env; echo in-log >&2; exec sleep 30"
pid = detach.detach(["sh", "-c", script], cwd=out, extra={"MARK": "detach"}, log=fd)
os.close(fd)
try:
    os.waitpid(pid, os.WNOHANG)
    seen["ours"] = True
except ChildProcessError:
    seen["ours"] = False
seen["session"] = os.getsid(pid) != os.getsid(0)
seen["pid"] = pid
print(json.dumps(seen))
"""


def test_a_git_dir_in_the_parent_reaches_no_child_of_any_shape(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "GIT_DIR": "/bystander/.git", "GIT_WORK_TREE": "/bystander"}
    env["GIT_AUTHOR_NAME"] = "kept"
    log = tmp_path / "detached.log"
    done = subprocess.run(
        [sys.executable, "-c", SHAPES, str(tmp_path), str(log)],
        cwd=REPO,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    try:
        retry_until(lambda: "in-log" in log.read_text())
        assert liveness.is_alive(seen["pid"]), "the detached process outlived its starter"
    finally:
        os.kill(seen["pid"], signal.SIGKILL)
    seen["detach"] = log.read_text()
    assert seen["ours"] is False, "a detached process is adopted by init, not our child"
    assert seen["session"] is True
    for shape in ("run", "output", "start", "detach"):
        got = env_lines(seen[shape])
        assert "GIT_DIR" not in got and "GIT_WORK_TREE" not in got, shape
        assert got["GIT_AUTHOR_NAME"] == "kept", shape
        assert got.get("MARK", shape) == shape


def test_start_and_output_raise_oserror_and_detach_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        popen.start(["no-such-program-here"], cwd=str(tmp_path))
    with pytest.raises(FileNotFoundError):
        popen.output(["true"], cwd=str(tmp_path / "gone"))
    with pytest.raises(SwarmforgeError, match="Cannot start 'true'"):
        detach.detach(["true"], cwd=str(tmp_path / "gone"))
    with pytest.raises(SwarmforgeError, match="Cannot run 'true'"):
        popen.run_in(["true"], cwd=str(tmp_path / "gone"), env={})


def test_run_in_feeds_input_and_sends_both_streams_to_one_descriptor(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with log.open("wb") as f:
        code = popen.run_in(
            ["sh", "-c", "cat; echo err >&2; exit 4"],
            cwd=str(tmp_path),
            env={"PATH": "/usr/bin:/bin"},
            input=b"in\n",
            output=f.fileno(),
        )
    assert code == 4 and log.read_bytes() == b"in\nerr\n"


def test_a_started_child_can_be_signalled_and_waited_for(tmp_path: Path) -> None:
    child = popen.start(["sleep", "30"], cwd=str(tmp_path), session=True)
    assert os.getsid(child.pid) == child.pid
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=10) == -signal.SIGTERM


def test_the_host_fallbacks_agree_with_the_native_ways() -> None:
    for native in (True, False):
        if native and not host.HAS_PIPE2:
            continue
        r, w = host.pipe(native=native)
        try:
            assert not os.get_blocking(r) and not os.get_blocking(w)
            assert not os.get_inheritable(r) and not os.get_inheritable(w)
            os.write(w, b"x")
            assert os.read(r, 10) == b"x"
            with pytest.raises(BlockingIOError):
                os.read(r, 10)
        finally:
            os.close(r)
            os.close(w)


def test_a_git_dir_in_the_parent_reaches_no_planned_run_task(repo: Path, tmp_path: Path) -> None:
    bystander = tmp_path / "bystander"
    bystander.mkdir()
    git(bystander, "init", "-q")
    out = tmp_path / "seen"
    out.mkdir()

    def dump(name: str) -> list[str]:
        return ["sh", "-c", f"env > {out / name}.env"]

    (repo / "spec.json").write_text(
        json.dumps(
            {
                "goal": "env",
                "tasks": [
                    {"id": "pool", "command": dump("pool")},
                    {"id": "iso", "command": dump("iso"), "isolate": True},
                    {"id": "bg", "command": dump("bg"), "background": True},
                ],
            }
        )
    )
    env = {
        "PATH": f"{VENV_BIN}:/usr/bin:/bin",
        "HOME": "/nonexistent",
        "GIT_DIR": str(bystander / ".git"),
        "GIT_INDEX_FILE": str(bystander / "index"),
    }
    done = subprocess.run(
        [SWARMFORGE, "run", "spec.json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for name in ("pool", "iso", "bg"):
        seen = env_lines((out / f"{name}.env").read_text())
        assert "GIT_DIR" not in seen and "GIT_INDEX_FILE" not in seen, name
        assert seen["SWARMFORGE_TASK"] == name
    assert not (bystander / "index").exists()


@pytest.mark.slow
def test_a_git_dir_in_the_parent_reaches_no_agent_of_a_swarm(repo: Path, tmp_path: Path) -> None:
    make_swarm(repo, "window probe exec probe task sh -c 'env > probe.env'\n")
    env = {
        "PATH": f"{VENV_BIN}:/usr/bin:/bin",
        "HOME": "/nonexistent",
        "GIT_DIR": str(tmp_path / "elsewhere" / ".git"),
    }
    sf = [SWARMFORGE]
    up = subprocess.run([*sf, "up", "--backend", "headless"], cwd=repo, env=env, timeout=120)
    assert up.returncode == 0
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        kick(record, "probe", "someone")
        retry_until(lambda: len(completed(record, "probe")) == 1, timeout=30)
        role = record.role("probe")
        assert role is not None
        seen = env_lines((Path(role.path) / "probe.env").read_text())
        assert "GIT_DIR" not in seen and seen["SWARMFORGE_RUN_ID"] == record.run_id
    finally:
        subprocess.run([*sf, "down"], cwd=repo, env=env, timeout=120)


def test_one_process_table_finds_each_tree_as_psutil_does() -> None:
    # A shell with two children, one of which has a child of its own.
    script = "sleep 300 & (sleep 300 & wait) & wait"
    parent = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    try:
        retry_until(lambda: len(tagging.tree(parent.pid)) == 4)
        table = tagging.ProcessTable()
        found = table.tree(parent.pid)
        assert found[0].pid == parent.pid
        assert sorted(p.pid for p in found) == sorted(p.pid for p in tagging.tree(parent.pid))
        assert table.tree(2**22 + 1) == []  # no such process: nothing, as tree() says
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()


def open_fds() -> set[str]:
    return {p.name for p in Path("/dev/fd").iterdir()}


def test_run_closes_every_pipe_when_the_program_cannot_start(tmp_path: Path) -> None:
    before = open_fds()
    with pytest.raises(PermissionError):
        spawn.run([str(tmp_path)])  # a directory: found, but posix_spawn cannot run it
    assert open_fds() == before


class Interrupted(Exception):
    pass


def test_run_interrupted_kills_and_reaps_its_child(tmp_path: Path) -> None:
    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    pid_file = tmp_path / "pid"
    # The child itself interrupts us once it has read some input, so while we feed it
    # the rest: no guess at when that is.
    script = f"echo $$ > {pid_file}; head -c 1 >/dev/null; kill -USR1 $PPID; exec sleep 30"
    before = open_fds()
    previous = signal.signal(signal.SIGUSR1, interrupt)
    try:
        with pytest.raises(Interrupted):
            spawn.run(["sh", "-c", script], input=b"x" * 1_000_000)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    pid = int(pid_file.read_text())
    assert not liveness.is_alive(pid), "left running, or a zombie"
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert open_fds() == before


def test_run_gives_its_child_the_default_sigpipe() -> None:
    # Python ignores SIGPIPE; in the child a pipeline must end as in a shell: `yes`
    # dies of SIGPIPE (128 + 13) once `head` has gone, instead of failing with EPIPE (1).
    done = spawn.run(["sh", "-c", "(yes; echo $? >&2) | head -c 1 >/dev/null"])
    assert done.stderr.strip() == str(128 + signal.SIGPIPE).encode(), "SIGPIPE ignored"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's /proc")
def test_run_gives_its_child_every_signal_python_ignores_back() -> None:
    status = spawn.run(["cat", "/proc/self/status"]).stdout.decode()
    ignored = int(env_lines(status.replace(":\t", "="))["SigIgn"], 16)
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (signum - 1)), signal.Signals(signum).name


@pytest.mark.parametrize("native", [True, False], ids=["procfs", "psutil"])
def test_a_zombie_is_not_alive_and_a_reaped_pid_is_not_either(native: bool) -> None:
    if native and not host.HAS_PROCFS:
        pytest.skip("no /proc here")
    assert liveness.is_alive(os.getpid()) and not host.zombie(os.getpid(), native=native)
    child = subprocess.Popen(["true"])  # exits at once and stays unreaped: a zombie
    try:
        retry_until(lambda: host.zombie(child.pid, native=native))
        assert not liveness.is_alive(child.pid)
    finally:
        child.wait()
    assert not host.zombie(child.pid, native=native) and not liveness.is_alive(child.pid)


def test_no_pid_or_a_group_is_never_alive() -> None:
    for pid in (None, 0, -1, -os.getpgrp()):
        assert not liveness.is_alive(pid)
    assert liveness.is_alive(1)  # init: another user's process, alive
