"""The journal of a planned run: appends, parse on read, torn tails, checkpoints, resume."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.run.journal.checkpoint import CHECKPOINT, read_checkpoint, write_checkpoint
from swarmforge.run.journal.events import TaskEnqueued
from swarmforge.run.journal.file import EVENTS, Journal, read_events
from swarmforge.run.journal.replay import resume_states
from swarmforge.run.orchestrator import Orchestrator, runs_dir
from swarmforge.run.parking import ledgers
from swarmforge.run.spec.runspec import RunSpec, run_id
from swarmforge.run.taskgraph import STATUSES

REPO = Path(__file__).resolve().parents[1]


def lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / EVENTS).read_bytes().splitlines()]


def started(run: Path) -> Journal:
    journal = Journal.open(str(run))
    journal.append("run-started", runId="r1", goal="ship it", tasks=3)
    return journal


def test_append_and_read_round_trip(tmp_path: Path) -> None:
    journal = started(tmp_path)
    journal.append("task-enqueued", id="a", status="ready", parent=None)
    journal.append("task-state", id="a", status="done", exitCode=0)
    journal.append("worktree", id="a", action="removed", path="/w", branch="b", rescued="abc")
    journal.append("run-finished", counts={"done": 1}, ok=True)
    events, warnings = read_events(str(tmp_path / EVENTS))
    assert events == journal.events and warnings == []
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    first = lines(tmp_path)[2]
    assert first["kind"] == "task-state" and first["reason"] is None and first["exitCode"] == 0
    assert read_events(str(tmp_path / "missing.jsonl")) == ([], [])


def test_append_refuses_a_malformed_event_and_writes_nothing(tmp_path: Path) -> None:
    journal = started(tmp_path)
    bad: list[tuple[str, dict[str, Any]]] = [
        ("task-state", {"id": "a", "status": "sleeping"}),
        ("no-such-kind", {}),
        ("task-state", {"id": "a", "status": "done", "colour": "red"}),
        ("task-state", {"id": "a", "status": "done", "seq": 9}),
    ]
    for kind, fields in bad:
        with pytest.raises(ValueError):
            journal.append(kind, **fields)
    assert len(lines(tmp_path)) == 1 and journal.next_seq == 2


def test_seq_continues_across_reopen(tmp_path: Path) -> None:
    started(tmp_path).append("task-state", id="a", status="running")
    journal = Journal.open(str(tmp_path))
    assert journal.next_seq == 3 and journal.warnings == []
    assert journal.append("run-resumed", runId="r1").seq == 3
    assert [line["seq"] for line in lines(tmp_path)] == [1, 2, 3]


def test_torn_last_line_is_reported_cut_off_and_the_next_append_is_clean(tmp_path: Path) -> None:
    started(tmp_path)
    path = tmp_path / EVENTS
    whole = path.read_bytes()
    with path.open("ab") as f:
        f.write(b'{"seq":2,"ts":"2026-06-15T14:05:31.123Z","kind":"task-st')
    events, warnings = read_events(str(path))
    assert len(events) == 1 and warnings == [
        f"{path}, line 2: torn last line (no newline), skipped"
    ]
    assert len(path.read_bytes()) > len(whole)  # reading alone never writes
    journal = Journal.open(str(tmp_path))
    assert journal.warnings == [f"{path}, line 2: torn last line (no newline), cut off"]
    assert path.read_bytes() == whole
    journal.append("task-state", id="a", status="ready")
    assert [line["seq"] for line in lines(tmp_path)] == [1, 2]


def test_an_invalid_complete_last_line_counts_as_torn(tmp_path: Path) -> None:
    started(tmp_path)
    path = tmp_path / EVENTS
    with path.open("ab") as f:
        f.write(b"\0\0\0\0garbage\n")
    journal = Journal.open(str(tmp_path))
    assert (
        len(journal.events) == 1 and "line 2: torn last line (Invalid JSON" in journal.warnings[0]
    )
    assert len(lines(tmp_path)) == 1


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (b"{not json\n", "Invalid JSON"),
        (b'{"seq":2,"ts":"2026-06-15T14:05:31.123Z","kind":"task-exploded"}\n', "kind"),
        (b'{"seq":2,"ts":"2026-06-15T14:05:31.123Z","kind":"task-state","id":"a"}\n', "status"),
        (b'{"seq":2,"ts":"yesterday","kind":"run-resumed","runId":"r"}\n', "ts"),
        (b'{"seq":7,"ts":"2026-06-15T14:05:31.123Z","kind":"run-resumed","runId":"r"}\n', "seq 7"),
        (b"\n", "Invalid JSON"),
    ],
)
def test_a_corrupt_middle_line_is_refused_with_its_line_number(
    tmp_path: Path, bad: bytes, problem: str
) -> None:
    started(tmp_path)
    path = tmp_path / EVENTS
    with path.open("ab") as f:
        f.write(bad)
        f.write(b'{"seq":3,"ts":"2026-06-15T14:05:31.123Z","kind":"run-resumed","runId":"r"}\n')
    for read in (lambda: read_events(str(path)), lambda: Journal.open(str(tmp_path))):
        with pytest.raises(CorruptFile) as caught:
            read()
        assert caught.value.path == str(path) and caught.value.line == 2
        assert problem in caught.value.problem


def test_a_wrong_seq_on_the_last_line_is_corruption_not_a_tear(tmp_path: Path) -> None:
    started(tmp_path)
    path = tmp_path / EVENTS
    with path.open("ab") as f:
        f.write(b'{"seq":1,"ts":"2026-06-15T14:05:31.123Z","kind":"run-resumed","runId":"r"}\n')
    with pytest.raises(CorruptFile, match="line 2: seq 1 where 2 was expected"):
        Journal.open(str(tmp_path))


def test_append_refuses_when_another_writer_changed_the_file(tmp_path: Path) -> None:
    journal = started(tmp_path)
    other = Journal.open(str(tmp_path))
    other.append("run-resumed", runId="r1")
    with pytest.raises(SwarmforgeError, match="changed under its writer"):
        journal.append("run-resumed", runId="r1")
    assert [line["seq"] for line in lines(tmp_path)] == [1, 2]


def enqueued(task_id: str, status: str, parent: str | None = None) -> tuple[str, dict[str, Any]]:
    return ("task-enqueued", {"id": task_id, "status": status, "parent": parent})


def test_was_enqueued_knows_what_was_written_before_any_sync_and_after_reopen(
    tmp_path: Path,
) -> None:
    journal = started(tmp_path)
    # The recorder's way: written, made durable later by the group commit.
    journal.write_many([enqueued("a", "ready"), enqueued("b", "blocked", "a")])
    assert journal.was_enqueued("a") and journal.was_enqueued("b")
    assert not journal.was_enqueued("c")
    journal.close()
    reopened = Journal.open(str(tmp_path))
    assert reopened.was_enqueued("b") and not reopened.was_enqueued("c")
    # Nothing written since open: the sync still covers, and returns, what was read.
    assert reopened.sync() == 3
    reopened.close()


def test_a_resumed_run_journals_each_task_enqueued_once(tmp_path: Path) -> None:
    s = RunSpec.model_validate(
        {
            "goal": "twice",
            "tasks": [
                {"id": "risky", "command": ["true"], "tier": "T4"},
                {"id": "after", "command": ["true"], "dependsOn": ["risky"]},
                {"id": "lead", "subtasks": [{"id": "sub", "command": ["true"]}]},
            ],
        }
    )
    assert Orchestrator(str(tmp_path), s).run().parked == {"risky": "tier-t4"}
    run_dir = Path(runs_dir(str(tmp_path))) / run_id(s)
    ledgers.approve(str(run_dir), "risky", "test")
    assert Orchestrator(str(tmp_path), s).run().counts == {"done": 4}
    events, _ = read_events(str(run_dir / EVENTS))
    ids = [e.id for e in events if isinstance(e, TaskEnqueued)]
    assert sorted(ids) == ["after", "lead", "risky", "sub"]
    assert [e.kind for e in events].count("run-resumed") == 1


def fill(journal: Journal) -> None:
    """a: ready->running->done, b: blocked->ready, c: parked; a checkpoint at seq 7."""
    journal.append_many([enqueued("a", "ready"), enqueued("b", "blocked"), enqueued("c", "parked")])
    journal.append("task-state", id="a", status="running", pid=42)
    states = {"a": "running", "b": "blocked", "c": "parked"}
    assert journal.next_seq == 6
    write_checkpoint(str(Path(journal.path).parent), journal.next_seq, states, ["c"])
    journal.append("checkpoint", states=states, parked=["c"])
    journal.append("task-state", id="a", status="done", exitCode=0)
    journal.append("task-state", id="b", status="ready")


def test_resume_applies_events_after_the_checkpoint(tmp_path: Path) -> None:
    fill(started(tmp_path))
    states, journal = resume_states(str(tmp_path))
    assert states == {"a": "done", "b": "ready", "c": "parked"}
    assert journal.next_seq == 9
    checkpoint = read_checkpoint(str(tmp_path))
    assert checkpoint is not None and checkpoint.seq == 6 and checkpoint.parked == ["c"]


def test_resume_of_a_new_run_is_empty_and_creates_the_journal(tmp_path: Path) -> None:
    states, journal = resume_states(str(tmp_path / "run"))
    assert states == {} and journal.events == [] and (tmp_path / "run" / EVENTS).exists()


def test_resume_prefers_a_newer_checkpoint_event_over_an_older_file(tmp_path: Path) -> None:
    journal = started(tmp_path)
    fill(journal)
    # A later checkpoint whose file write never happened: the event is the newer one.
    journal.append("checkpoint", states={"a": "done", "b": "failed"}, parked=[])
    journal.append("task-state", id="c", status="ready")
    states, _ = resume_states(str(tmp_path))
    assert states == {"a": "done", "b": "failed", "c": "ready"}


def test_resume_prefers_a_newer_file_over_the_last_checkpoint_event(tmp_path: Path) -> None:
    journal = started(tmp_path)
    fill(journal)
    # Crash after checkpoint.json, before its event: the file is one ahead of the journal.
    write_checkpoint(str(tmp_path), journal.next_seq, {"a": "done", "b": "done"}, [])
    states, journal = resume_states(str(tmp_path))
    assert states == {"a": "done", "b": "done"}
    # The event that now takes that seq is replayed, not skipped, on the next resume.
    journal.append("task-state", id="b", status="failed")
    assert resume_states(str(tmp_path))[0] == {"a": "done", "b": "failed"}


def test_a_checkpoint_beyond_the_journal_is_refused(tmp_path: Path) -> None:
    started(tmp_path)
    write_checkpoint(str(tmp_path), 5, {}, [])
    with pytest.raises(CorruptFile, match="seq 5 is beyond the end"):
        resume_states(str(tmp_path))


def test_resume_applies_a_park_even_without_a_task_state(tmp_path: Path) -> None:
    journal = started(tmp_path)
    journal.append("task-enqueued", id="x", status="ready")
    journal.append("task-parked", id="x", reason="security")
    assert resume_states(str(tmp_path))[0] == {"x": "parked"}


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (b'{"seq": 1,\n "states": {},\n "parked": [}', 3, "Expecting value"),
        (b'{"seq": 1, "states": {"a": "lost"}, "parked": []}', None, "states.a"),
        (b'{"seq": 1, "states": {}}', None, "parked"),
        (b"[1]", None, "valid dictionary"),
    ],
)
def test_a_damaged_checkpoint_is_refused(
    tmp_path: Path, text: bytes, line: int | None, problem: str
) -> None:
    (tmp_path / CHECKPOINT).write_bytes(text)
    with pytest.raises(CorruptFile) as caught:
        read_checkpoint(str(tmp_path))
    assert caught.value.path == str(tmp_path / CHECKPOINT) and caught.value.line == line
    assert problem in caught.value.problem


CHILD = """
import os, sys
from swarmforge.run.journal.file import Journal
journal = Journal.open(sys.argv[1])
big = {f"task-{i}": "running" for i in range(3000)}
while True:
    n = journal.next_seq
    if n % 5 == 0:
        event = journal.append("checkpoint", states=big, parked=[])
    else:
        event = journal.append("task-state", id=f"t{n % 7}", status="running", pid=os.getpid())
    print(event.seq, flush=True)
"""


@pytest.mark.slow
def test_a_writer_killed_at_random_moments_never_breaks_the_journal(tmp_path: Path) -> None:
    rng = random.Random(1234)
    path = tmp_path / EVENTS
    acknowledged = 0
    for _ in range(6):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE
        )
        assert child.stdout is not None
        for _ in range(rng.randint(1, 150)):
            acknowledged = int(child.stdout.readline())
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        raw = path.read_bytes()
        complete = raw.count(b"\n")
        journal = Journal.open(str(tmp_path))
        # Every complete line is kept; a torn tail (if the kill landed mid-write) is cut off.
        assert len(journal.events) == complete >= acknowledged
        assert [e.seq for e in journal.events] == list(range(1, complete + 1))
        assert path.read_bytes() == raw[: raw.rfind(b"\n") + 1]
        assert len(journal.warnings) == (0 if raw.endswith(b"\n") else 1)


STATUS = st.sampled_from(STATUSES)
TEXT = st.text(min_size=1, max_size=12)
MAYBE = st.none() | TEXT
SMALL = st.integers(-(2**40), 2**40)
EVENT_LISTS = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"kind": st.just("run-started"), "runId": TEXT, "goal": st.text(), "tasks": SMALL}
        ),
        st.fixed_dictionaries({"kind": st.just("run-resumed"), "runId": TEXT}),
        st.fixed_dictionaries(
            {"kind": st.just("task-enqueued"), "id": TEXT, "status": STATUS, "parent": MAYBE}
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("task-state"),
                "id": TEXT,
                "status": STATUS,
                "reason": MAYBE,
                "exitCode": st.none() | SMALL,
                "pid": st.none() | SMALL,
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("task-parked"),
                "id": TEXT,
                "reason": st.sampled_from(
                    ["tier-t4", "irreversible", "legal", "security", "manual"]
                ),
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("worktree"),
                "id": TEXT,
                "action": st.sampled_from(["created", "removed"]),
                "path": st.text(),
                "branch": st.text(),
                "rescued": MAYBE,
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("checkpoint"),
                "states": st.dictionaries(st.text(), STATUS, max_size=4),
                "parked": st.lists(st.text(), max_size=3),
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("run-finished"),
                "counts": st.dictionaries(st.text(), SMALL, max_size=4),
                "ok": st.booleans(),
            }
        ),
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(EVENT_LISTS)
def test_arbitrary_event_sequences_round_trip(events: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as run:
        journal = Journal.open(run)
        for fields in events:
            journal.append(**fields)
        read, warnings = read_events(journal.path)
        assert read == journal.events and warnings == []
        assert [e.model_dump(exclude={"seq", "ts"}) for e in read] == events
        assert Journal.open(run).events == read
