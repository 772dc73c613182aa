"""The background group commit of a run's journal."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from swarmforge.errors import SwarmforgeError
from swarmforge.run.journal.committer import Committer
from swarmforge.run.journal.file import Journal, read_events


def state(n: int) -> tuple[str, dict[str, object]]:
    return ("task-state", {"id": f"t{n}", "status": "done"})


def test_written_events_become_durable_and_wake_the_writer(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path))
    woken = threading.Event()
    with Committer(journal, woken.set, interval=0.001) as committer:
        journal.write_many([state(n) for n in range(5)])
        committer.kick()
        committer.wait(5)
        assert committer.durable >= 5
        assert woken.wait(5)
    events, warnings = read_events(journal.path)
    assert [e.seq for e in events] == [1, 2, 3, 4, 5] and warnings == []
    journal.close()


def test_events_written_before_stopping_are_synced_on_the_way_out(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path))
    committer = Committer(journal, lambda: None, interval=60.0)
    with committer:
        for n in range(50):
            journal.write_many([state(n)])
            committer.kick()
    assert committer.durable == 50
    journal.close()


def test_a_failing_fsync_is_raised_to_the_writer(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path))
    with Committer(journal, lambda: None) as committer:
        journal.write_many([state(1)])
        # The journal's descriptor turns into a pipe under the committer: fsync fails
        # (EINVAL), as it would on a file system that cannot sync.
        read_end, write_end = os.pipe()
        os.dup2(read_end, journal_descriptor(journal.path))
        os.close(read_end)
        os.close(write_end)
        with pytest.raises(SwarmforgeError, match="cannot sync"):
            committer.wait(1)
        with pytest.raises(SwarmforgeError):
            committer.check()
    journal.close()


def journal_descriptor(path: str) -> int:
    """The descriptor this process holds open on `path`, found through /proc."""
    fds = Path("/proc/self/fd")
    [fd] = [int(f.name) for f in fds.iterdir() if os.path.realpath(f) == os.path.realpath(path)]
    return fd


def test_write_many_is_visible_at_once_and_append_many_durable(tmp_path: Path) -> None:
    journal = Journal.open(str(tmp_path))
    journal.write_many([state(1)])
    assert len(read_events(journal.path)[0]) == 1  # readers see it before any fsync
    journal.append_many([state(2), state(3)])
    assert journal.written_seq == 3 and journal.sync() == 3
    journal.close()
