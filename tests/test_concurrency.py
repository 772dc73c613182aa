"""Sequence allocation under concurrency and after a lock holder was killed."""

from __future__ import annotations

import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box
from tests.support import BIN, Project, retry_until, run_script, script_env


@pytest.mark.slow
def test_32_concurrent_gates_get_32_distinct_sequence_numbers(project: Project) -> None:
    tree = project.tree("coder")
    for i in range(32):
        (tree / f"d{i}").write_text(f"type: note\nto: qa\npriority: 50\nmessage: m{i}\n")
    with ThreadPoolExecutor(max_workers=32) as pool:
        results = list(
            pool.map(lambda i: run_script("swarm_handoff.sh", tree, "coder", f"d{i}"), range(32))
        )
    assert [r.returncode for r in results] == [0] * 32, [r.stderr for r in results]
    queued = [n for n in project.names("coder", Box.OUTBOX) if n.endswith(".handoff")]
    assert len(queued) == 32
    sequences = sorted(name.split("_")[2] for name in queued)
    assert sequences == [f"{n:06d}" for n in range(1, 33)]
    messages = sorted(
        message.read(str(project.box("coder", Box.OUTBOX) / n)).get("message") or "" for n in queued
    )
    assert messages == sorted(f"m{i}" for i in range(32))
    assert (project.box("coder", "") / "sequence").read_text() == "000032\n"


def test_a_killed_lock_holder_does_not_block_the_next_gate(project: Project) -> None:
    tree = project.tree("coder")
    root = project.mailbox("coder").root
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from swarmforge.handoff.sequence import SequenceLock\n"
            f"with SequenceLock({root!r}):\n"
            "    print('locked', flush=True)\n"
            "    time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        (tree / "d").write_text("type: note\nto: qa\npriority: 50\nmessage: m\n")
        gate = subprocess.Popen(
            [str(BIN / "swarm_handoff.sh"), "d"],
            cwd=tree,
            env=script_env("coder"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # While the holder lives, the gate waits for the lock and queues nothing.
        retry_until((Path(root) / "sequence.flock").exists)
        assert gate.poll() is None
        assert not any(n.endswith(".handoff") for n in project.names("coder", Box.OUTBOX))
        holder.send_signal(signal.SIGKILL)
        out, err = gate.communicate(timeout=30)
        assert gate.returncode == 0, err
        assert out.startswith("HANDOFF QUEUED: ") and "_000001_from_coder_" in out
    finally:
        holder.kill()
        holder.wait()


def test_gate_and_receive_from_a_symlink_and_any_directory(
    project: Project, tmp_path: Path
) -> None:
    links = tmp_path / "links"
    links.mkdir()
    for name in ("swarm_handoff.sh", "ready_for_next.sh"):
        (links / name).symlink_to(BIN / name)
    tree = project.tree("coder")
    (tree / "d").write_text("type: note\nto: cleaner\npriority: 50\nmessage: m\n")
    r = run_script("swarm_handoff.sh", tree, "coder", "d", script_dir=links)
    assert r.returncode == 0, r.stderr
    project.deliver(r.stdout.split(": ", 1)[1].strip())
    r = run_script("ready_for_next.sh", project.tree("cleaner"), "cleaner", script_dir=links)
    assert r.returncode == 0 and r.stdout.startswith("TASK: ")


def test_helpers_find_the_package_through_swarmforge_on_path(
    project: Project, tmp_path: Path
) -> None:
    # A copy of bin/ with no virtual environment beside it: the interpreter is
    # found from the shebang of the `swarmforge` command on PATH.
    copy = tmp_path / "elsewhere" / "bin"
    copy.mkdir(parents=True)
    for script in BIN.iterdir():
        (copy / script.name).write_bytes(script.read_bytes())
        (copy / script.name).chmod(0o755)
    r = run_script(
        "ready_for_next.sh",
        project.tree("qa"),
        "qa",
        script_dir=copy,
        path=f"{Path(sys.executable).parent}:/usr/bin:/bin",
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, "NO_TASK\n", "")
