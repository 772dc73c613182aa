"""Delivery of outbox files: copies, idempotent retries, and what goes to failed/."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmforge import filewrite
from swarmforge import roletable as sfproject
from swarmforge.handoff import copies, delivery, message, waiting
from swarmforge.handoff.mailbox import Box
from swarmforge.handoff.outcome import DELIVERED, FAILED
from tests.support import Project
from tests.support import queue_note as send


@pytest.fixture
def swarm(repo: Path) -> Project:
    return Project(repo, {"coder": "task", "cleaner": "task", "qa": "batch", "architect": "task"})


def roles(swarm: Project) -> dict[str, sfproject.RoleEntry]:
    return sfproject.read_roles(str(swarm.root))


def test_a_broadcast_reaches_every_recipient_then_is_archived(swarm: Project) -> None:
    path = send(swarm, "coder", "cleaner,qa,architect", "hello")
    name = Path(path).name
    outcome = delivery.deliver(path, roles(swarm))
    assert (outcome.status, outcome.copied) == (DELIVERED, ["cleaner", "qa", "architect"])
    original = message.read(str(swarm.box("coder", Box.SENT) / name))
    for role in ("cleaner", "qa", "architect"):
        assert swarm.names(role, Box.NEW) == [name]
        copy = message.read(str(swarm.box(role, Box.NEW) / name))
        assert copy.get("recipient") == role and copy.get("enqueued_at")
        assert copy.headers[: len(original.headers)] == original.headers
        assert copy.body == original.body
    assert swarm.names("coder", Box.OUTBOX) == ["tmp"]


def test_a_retry_completes_missing_copies_without_doubling(swarm: Project) -> None:
    path = send(swarm, "coder", "cleaner,qa,architect")
    name = Path(path).name
    table = roles(swarm)
    handoff = message.read(path)
    # A crash after the first copy: cleaner has it and has even accepted it.
    assert copies.copy_to(handoff, name, "cleaner", table["cleaner"])
    in_process = swarm.box("cleaner", Box.IN_PROCESS)
    in_process.mkdir(parents=True)
    (swarm.box("cleaner", Box.NEW) / name).rename(in_process / name)
    # qa already batched and completed it.
    batch = swarm.box("qa", Box.COMPLETED) / "batch_20260101T000000Z_000001"
    batch.mkdir(parents=True)
    assert copies.copy_to(handoff, name, "qa", table["qa"])
    (swarm.box("qa", Box.NEW) / name).rename(batch / name)

    outcome = delivery.deliver(path, table)
    assert outcome.copied == ["architect"]
    assert swarm.names("cleaner", Box.NEW) == [] and swarm.names("qa", Box.NEW) == []
    assert swarm.names("architect", Box.NEW) == [name]
    assert (swarm.box("coder", Box.SENT) / name).exists()


def test_a_different_file_of_the_same_name_is_never_overwritten(swarm: Project) -> None:
    path = send(swarm, "coder", "qa")
    name = Path(path).name
    squatter = swarm.enqueue("qa", name, {"id": "something-else"}, "theirs\n")
    outcome = delivery.deliver(path, roles(swarm))
    assert outcome.status == FAILED and "a different handoff" in outcome.reason
    assert squatter.read_text() == "id: something-else\n\ntheirs\n"
    assert (swarm.box("coder", Box.FAILED) / name).exists()


def failed_reason(swarm: Project, sender: str, name: str) -> str:
    failed = swarm.box(sender, Box.FAILED)
    assert (failed / name).exists() or (failed / name).is_symlink()
    return (failed / f"{name}.error").read_text()


def test_an_unknown_recipient_fails_the_whole_file_before_any_copy(swarm: Project) -> None:
    path = send(swarm, "coder", "cleaner,qa")
    name = Path(path).name
    table = roles(swarm)
    del table["qa"]  # qa left the swarm after the gate accepted the draft
    outcome = delivery.deliver(path, table)
    assert outcome.status == FAILED
    assert failed_reason(swarm, "coder", name) == "unknown recipient role 'qa'\n"
    assert swarm.names("cleaner", Box.NEW) == []
    assert swarm.names("coder", Box.SENT) == []


def gate_name(what: str) -> str:
    """A file name of the form the gate makes, told apart by `what` (digits)."""
    return f"50_20260101T000000Z_{what:0>6}_from_coder_to_qa.handoff"


def test_malformed_and_unreadable_files_fail_with_their_reason(swarm: Project) -> None:
    outbox = swarm.box("coder", Box.OUTBOX)
    outbox.mkdir(parents=True)
    bad, binary, dangling, noto = (gate_name(n) for n in ("1", "2", "3", "4"))
    (outbox / bad).write_bytes(b"to: qa\nthis is not a header\n\nbody\n")
    (outbox / binary).write_bytes(b"to: qa\xff\n\n")
    (outbox / dangling).symlink_to(outbox / "nowhere")
    (outbox / noto).write_bytes(b"from: coder\n\nbody\n")
    good = send(swarm, "coder", "qa")
    table = roles(swarm)
    outcomes = {
        Path(p).name: delivery.deliver(p, table).status for p in waiting.pending(str(outbox))
    }
    assert outcomes == {
        Path(good).name: DELIVERED,
        bad: FAILED,
        binary: FAILED,
        dangling: FAILED,
        noto: FAILED,
    }
    assert failed_reason(swarm, "coder", bad) == (
        f"malformed: {outbox / bad}, line 2: expected 'field: value'\n"
    )
    assert failed_reason(swarm, "coder", binary).startswith("malformed: ")
    # Never followed: only regular files are opened.
    assert failed_reason(swarm, "coder", dangling) == "not a regular file (a symbolic link)\n"
    assert failed_reason(swarm, "coder", noto) == "the handoff has no 'to' header\n"
    assert swarm.names("qa", Box.NEW) == [Path(good).name]
    assert swarm.names("coder", Box.OUTBOX) == ["tmp"]


def test_pending_ignores_temporary_and_hidden_files(swarm: Project) -> None:
    outbox = swarm.box("coder", Box.OUTBOX)
    (outbox / "tmp").mkdir(parents=True)
    (outbox / "tmp" / "50_x.handoff.tmp").write_text("half")
    (outbox / ".50_y.handoff").write_text("hidden")
    (outbox / "notes.txt").write_text("no")
    (outbox / "dir.handoff").mkdir()
    assert waiting.pending(str(outbox)) == []


def test_publish_never_replaces(tmp_path: Path) -> None:
    final = tmp_path / "a.handoff"
    final.write_text("first")
    tmp = filewrite.temp_name(str(final))
    filewrite.write_new(tmp, b"second")
    assert filewrite.publish(tmp, str(final)) is False
    assert final.read_text() == "first" and not Path(tmp).exists()
