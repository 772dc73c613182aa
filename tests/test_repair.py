"""`swarmforge repair`: work stuck in process goes back to its queue, once, byte for byte."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmforge import eventread, events, filewrite, times
from swarmforge.config import sessionrecord
from swarmforge.handoff import draft, message
from swarmforge.handoff.done import done_task
from swarmforge.handoff.inprocess import annotate
from swarmforge.handoff.mailbox import Box
from swarmforge.handoff.ready import ready_batch, ready_task
from swarmforge.swarm.repair.copies import stamped
from swarmforge.swarm.repair.project import repair
from tests.support import CAPTURES, Project, make_swarm, queue_note, record_run, retry_until
from tests.support import run_cli as sf

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def give(project: Project, role: str, *texts: str) -> list[Path]:
    """Queue a note to `role` for each text, through the gate, and deliver it."""
    copies = []
    for i, text in enumerate(texts):
        queued = queue_note(project, "coder", role, text, draft=f"d{i}")
        copies += project.deliver(queued)
    return copies


def take(project: Project, role: str) -> list[Path]:
    """Take the next task or batch of `role` as `ready` does; the items now in process."""
    box = project.mailbox(role)
    if project.roles[role] == "batch":
        batch = ready_batch(box)
        assert batch is not None
        return [Path(t.path) for t in batch.items]
    task = ready_task(box)
    assert task is not None
    return [Path(task.path)]


def requeued(original: bytes, copy: bytes) -> None:
    """`copy` is `original` with `requeued_at` and `requeue_count: 1` added, and nothing else."""
    head, _, body = original.partition(b"\n\n")
    added = rb"\nrequeued_at: (\S+)\nrequeue_count: 1\n\n"
    match = re.fullmatch(re.escape(head) + added + re.escape(body), copy, re.S)
    assert match is not None, copy
    assert STAMP.fullmatch(match.group(1).decode())


def listing(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its content, git's index aside (`status` refreshes it),
    and the captures of each role's work a repair takes with their events."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.name not in ("index", "index.lock", "events.jsonl")
        and not str(p.relative_to(root)).startswith(CAPTURES)
    }


def logged(root: Path, kind: str) -> list[dict[str, object]]:
    chunk = eventread.read(events.log_path(str(root)))
    assert chunk.bad == []
    return [e for e in chunk.events if e["kind"] == kind]


def test_an_item_in_process_with_no_swarm_goes_back_stamped(project: Project) -> None:
    give(project, "cleaner", "tidy up")
    [held] = take(project, "cleaner")
    before = held.read_bytes()

    report = repair(str(project.root))

    back = project.box("cleaner", Box.NEW) / held.name
    assert project.names("cleaner", Box.IN_PROCESS) == []
    assert project.names("cleaner", Box.NEW) == [held.name]
    requeued(before, back.read_bytes())
    assert [
        (r.role, r.file, r.reason, r.action, r.destination, r.requeue_count) for r in report.repairs
    ] == [("cleaner", str(held), "no swarm running", "requeued", str(back), 1)]
    assert report.ok
    [event] = logged(project.root, "handoff-requeued")
    assert {k: event[k] for k in ("role", "name", "count", "reason")} == {
        "role": "cleaner",
        "name": held.name,
        "count": 1,
        "reason": "no swarm running",
    }


def test_a_second_repair_counts_two(project: Project) -> None:
    give(project, "cleaner", "tidy up")
    take(project, "cleaner")
    repair(str(project.root))
    [held] = take(project, "cleaner")
    before = held.read_bytes()
    assert b"requeue_count: 1\n" in before

    repair(str(project.root))

    after = (project.box("cleaner", Box.NEW) / held.name).read_bytes()
    # Both headers are replaced where they stand; every other byte is as it was taken.
    at = re.compile(rb"requeued_at: \S+\n")
    assert at.sub(b"", after) == at.sub(b"", before).replace(b"count: 1\n", b"count: 2\n")
    assert len(at.findall(after)) == 1
    assert [e["count"] for e in logged(project.root, "handoff-requeued")] == [1, 2]


def test_nothing_in_process_needs_no_repair(project: Project) -> None:
    give(project, "cleaner", "tidy up")
    report = repair(str(project.root))
    assert (report.repairs, report.ok) == ([], True)
    result = sf("repair", cwd=project.root)
    assert (result.returncode, result.stdout, result.stderr) == (0, "nothing to repair\n", "")


def test_a_dry_run_changes_nothing(project: Project) -> None:
    give(project, "cleaner", "tidy up")
    give(project, "qa", "check one", "check two")
    [held] = take(project, "cleaner")
    take(project, "qa")
    before = listing(project.root)

    report = repair(str(project.root), dry_run=True)

    assert listing(project.root) == before
    assert [(r.role, r.action, r.requeue_count) for r in report.repairs] == [
        ("cleaner", "requeued", 1),
        ("qa", "requeued", 1),
        ("qa", "requeued", 1),
    ]
    result = sf("repair", "--dry-run", cwd=project.root)
    assert result.returncode == 0, result.stderr
    assert f"cleaner: {held.name} (no swarm running): would be requeued: " in result.stdout
    assert listing(project.root) == before


def test_a_half_done_batch_returns_only_its_unfinished_items(project: Project) -> None:
    give(project, "qa", "one", "two", "three")
    items = take(project, "qa")
    batch = items[0].parent
    originals = {p.name: p.read_bytes() for p in items}
    # A `done` killed while it stamped the batch: the first item is finished, the rest not.
    annotate(str(items[0]), [("completed_at", times.stamp())])

    report = repair(str(project.root))

    assert project.names("qa", Box.IN_PROCESS) == []
    assert project.names("qa", Box.NEW) == sorted(p.name for p in items[1:])
    for item in items[1:]:
        requeued(originals[item.name], (project.box("qa", Box.NEW) / item.name).read_bytes())
    done = project.box("qa", Box.COMPLETED) / batch.name
    assert sorted(p.name for p in done.iterdir()) == [items[0].name]
    assert [(r.file, r.action, r.destination) for r in report.repairs] == [
        (str(items[1]), "requeued", str(project.box("qa", Box.NEW) / items[1].name)),
        (str(items[2]), "requeued", str(project.box("qa", Box.NEW) / items[2].name)),
        (str(items[0]), "completed", str(done / items[0].name)),
    ]
    assert [e["name"] for e in logged(project.root, "handoff-completed")] == [items[0].name]


def test_a_batch_nothing_of_which_was_finished_goes_back_whole(project: Project) -> None:
    give(project, "qa", "one", "two")
    items = take(project, "qa")
    repair(str(project.root))
    assert project.names("qa", Box.IN_PROCESS) == []
    assert project.names("qa", Box.COMPLETED) == []
    assert project.names("qa", Box.NEW) == sorted(p.name for p in items)


def test_a_repair_killed_after_its_copy_is_finished_without_a_second(project: Project) -> None:
    give(project, "cleaner", "tidy up")
    [held] = take(project, "cleaner")
    copy = project.box("cleaner", Box.NEW) / held.name
    # What a repair killed between writing the copy and removing the original leaves.
    copy.write_bytes(stamped(message.read(str(held))).render())
    made = copy.read_bytes()

    dry = repair(str(project.root), dry_run=True)
    assert [(r.action, r.requeue_count) for r in dry.repairs] == [("requeued", 1)]
    assert held.exists()

    report = repair(str(project.root))

    assert [(r.action, r.destination, r.requeue_count) for r in report.repairs] == [
        ("requeued", str(copy), 1)
    ]
    assert project.names("cleaner", Box.IN_PROCESS) == []
    assert project.names("cleaner", Box.NEW) == [held.name]
    assert copy.read_bytes() == made
    assert repair(str(project.root)).repairs == []


def test_a_different_handoff_of_the_same_name_is_left_alone(project: Project) -> None:
    give(project, "cleaner", "tidy up")
    [held] = take(project, "cleaner")
    other = project.box("cleaner", Box.NEW) / held.name
    other.write_bytes(b"id: someone-else\n\nnot the same\n")

    report = repair(str(project.root))

    assert [(r.action, r.problem) for r in report.repairs] == [
        ("left", f"a different handoff of that name is already queued: {other}")
    ]
    assert not report.ok
    assert held.exists() and other.read_bytes() == b"id: someone-else\n\nnot the same\n"
    result = sf("repair", cwd=project.root)
    assert result.returncode == 2
    assert result.stdout.startswith(f"cleaner: {held.name} (no swarm running): left in place: ")


def test_an_item_its_role_finishes_during_the_repair_is_not_doubled(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    give(project, "cleaner", "tidy up")
    [held] = take(project, "cleaner")
    publish = filewrite.publish

    def then_done(tmp: str, path: str) -> bool:
        made = publish(tmp, path)
        done_task(project.mailbox("cleaner"))  # the role finishes it at that instant
        return made

    monkeypatch.setattr(filewrite, "publish", then_done)
    report = repair(str(project.root))

    done = project.box("cleaner", Box.COMPLETED) / held.name
    assert [(r.action, r.problem) for r in report.repairs] == [
        ("left", f"its role finished it meanwhile: {done}")
    ]
    assert project.names("cleaner", Box.NEW) == []
    assert project.names("cleaner", Box.IN_PROCESS) == []
    assert project.names("cleaner", Box.COMPLETED) == [held.name]
    assert logged(project.root, "handoff-requeued") == []


def test_an_item_another_repair_finishes_meanwhile_is_requeued_once(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    give(project, "cleaner", "tidy up")
    [held] = take(project, "cleaner")
    publish = filewrite.publish

    def then_removed(tmp: str, path: str) -> bool:
        made = publish(tmp, path)
        held.unlink()  # the other repair found this copy and removed the original first
        return made

    monkeypatch.setattr(filewrite, "publish", then_removed)
    report = repair(str(project.root))

    assert [r.action for r in report.repairs] == ["requeued"]
    assert project.names("cleaner", Box.NEW) == [held.name]
    assert project.names("cleaner", Box.IN_PROCESS) == []


@pytest.fixture
def alive(project: Project) -> Iterator[Project]:
    """A running headless run whose every role's process is a live one, as `status` sees it."""
    sleepers = {name: subprocess.Popen(["sleep", "60"]) for name in project.roles}
    record_run(project, pids={n: p.pid for n, p in sleepers.items()})
    try:
        yield project
    finally:
        for sleeper in sleepers.values():
            sleeper.kill()
            sleeper.wait()


def test_work_of_a_live_agent_is_left_alone_unless_older_than_asked(alive: Project) -> None:
    give(alive, "coder", "old work")
    give(alive, "cleaner", "new work")
    [old] = take(alive, "coder")
    [new] = take(alive, "cleaner")
    hours_ago = times.stamp(time.time() - 2 * 3600)
    annotate(str(old), [("dequeued_at", hours_ago)])
    before = listing(alive.root)

    assert repair(str(alive.root)).repairs == []
    assert repair(str(alive.root), older_than="3h").repairs == []
    assert listing(alive.root) == before

    report = repair(str(alive.root), older_than="1h")

    assert [(r.role, r.file, r.reason) for r in report.repairs] == [
        ("coder", str(old), "in process longer than 1h")
    ]
    assert alive.names("coder", Box.NEW) == [old.name]
    assert new.exists() and alive.names("cleaner", Box.NEW) == []


def test_work_of_an_agent_whose_process_died_goes_back(alive: Project) -> None:
    give(alive, "cleaner", "tidy up")
    [held] = take(alive, "cleaner")
    record = sessionrecord.load(str(alive.root))
    assert record is not None
    dead = subprocess.Popen(["true"])
    dead.wait()
    roles = [
        r.model_copy(update={"pid": dead.pid}) if r.name == "cleaner" else r for r in record.roles
    ]
    sessionrecord.save(str(alive.root), record.model_copy(update={"roles": roles}))

    report = repair(str(alive.root))

    assert [(r.role, r.reason, r.action) for r in report.repairs] == [
        ("cleaner", "agent gone", "requeued")
    ]
    assert alive.names("cleaner", Box.NEW) == [held.name]


def test_json_shape(project: Project) -> None:
    give(project, "cleaner", "tidy up")
    [held] = take(project, "cleaner")

    result = sf("repair", "--json", cwd=project.root)

    assert (result.returncode, result.stderr) == (0, "")
    shown = json.loads(result.stdout)
    assert shown == {
        "project": str(project.root.resolve()),
        "dry_run": False,
        "older_than": None,
        "ok": True,
        "repairs": [
            {
                "role": "cleaner",
                "file": str(held),
                "reason": "no swarm running",
                "action": "requeued",
                "destination": str(project.box("cleaner", Box.NEW) / held.name),
                "requeue_count": 1,
                "problem": None,
            }
        ],
        "captures_failed": [],
    }


@pytest.mark.parametrize("value", ["soon", "0s", ""])
def test_a_bad_age_is_one_clear_error(project: Project, value: str) -> None:
    give(project, "cleaner", "tidy up")
    take(project, "cleaner")
    before = listing(project.root)

    result = sf("repair", "--older-than", value, cwd=project.root)

    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith("--older-than: ")
    assert result.stderr.count("\n") == 1
    assert listing(project.root) == before


@pytest.mark.parametrize("field", ["requeued_at", "requeue_count"])
def test_senders_cannot_forge_the_repair_headers(field: str) -> None:
    text = f"type: note\nto: cleaner\npriority: 50\nmessage: hi\n{field}: 1\n"
    valid, errors = draft.validate(text.encode(), frozenset({"cleaner"}), lambda c: (c, None))
    assert valid is None
    assert errors == [f"Line 5: header '{field}' is reserved and must not be written by agents."]


@pytest.mark.slow
def test_a_real_headless_swarm_keeps_its_work_until_it_is_too_old(repo: Path) -> None:
    make_swarm(repo, "window worker exec worker task sh -c 'cat; sleep 30'\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        assert sf("send", "worker", "please work", cwd=repo).returncode == 0
        in_process = repo / ".worktrees" / "worker" / ".swarmforge" / "handoffs" / Box.IN_PROCESS
        # Items only: taking one writes it under a hidden temporary name first.
        items = lambda: [p for p in in_process.iterdir() if not p.name.startswith(".")]  # noqa: E731
        retry_until(lambda: in_process.is_dir() and items() != [], timeout=30)
        [held] = items()
        assert repair(str(repo)).repairs == []
        time.sleep(2)
        report = repair(str(repo), older_than="1s")
        assert [(r.role, r.action) for r in report.repairs] == [("worker", "requeued")]
        assert not held.exists()
    finally:
        assert sf("down", cwd=repo).returncode == 0
