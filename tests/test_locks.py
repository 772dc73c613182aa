"""The one lock helper: waiting its turn, timing out, locking a kept descriptor."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from swarmforge.errors import SwarmforgeError
from swarmforge.locks import Exclusive, ExclusiveFd, is_held

HOLD = (
    "import sys; from swarmforge.locks import Exclusive\n"
    "with Exclusive(sys.argv[1]):\n    print('held', flush=True); sys.stdin.read()"
)


def test_exclusive_makes_its_file_and_keeps_it(tmp_path: Path) -> None:
    path = str(tmp_path / "a" / "b" / "x.lock")
    with Exclusive(path):
        assert is_held(path)
    assert not is_held(path)
    assert Path(path).is_file()


def test_exclusive_waits_its_turn_in_threads_of_one_process(tmp_path: Path) -> None:
    path = str(tmp_path / "x.lock")
    inside: list[int] = []
    overlaps: list[int] = []

    def work(n: int) -> None:
        for _ in range(20):
            with Exclusive(path):
                inside.append(n)
                if len(inside) > 1:
                    overlaps.append(n)
                inside.remove(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == []


def test_a_timeout_names_the_lock_and_a_dead_holder_frees_it(tmp_path: Path) -> None:
    path = str(tmp_path / "x.lock")
    argv = [sys.executable, "-c", HOLD, path]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        started = time.monotonic()
        with pytest.raises(SwarmforgeError) as caught:
            Exclusive(path, timeout=0.1, what="test lock").__enter__()
        assert time.monotonic() - started < 2
        assert caught.value.message == f"Timed out after 0 s waiting for the test lock {path}."
        assert caught.value.hint == "A live process holds it; find it with fuser."
        holder.kill()
    with Exclusive(path, timeout=5):
        assert is_held(path)


def test_a_lock_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    os.mkfifo(path)
    with pytest.raises(SwarmforgeError, match="is a FIFO, not a regular file"):
        Exclusive(str(path)).__enter__()


def test_exclusive_fd_locks_a_kept_descriptor_and_leaves_it_open(tmp_path: Path) -> None:
    path = str(tmp_path / "data")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        with ExclusiveFd(fd):
            assert is_held(path)
        assert not is_held(path)
        os.write(fd, b"still open\n")
    finally:
        os.close(fd)
