"""Repository content posing as mailbox state: links, tracked handoffs, tracked state dirs."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from swarmforge.daemon.dispatcher import Dispatcher
from swarmforge.daemon.wake import Waker
from swarmforge.doctor.repository import check_tracked_state
from swarmforge.handoff import delivery, gate
from swarmforge.handoff.done import done_task
from swarmforge.handoff.mailbox import Box, UnsafeMailbox
from swarmforge.handoff.outcome import DELIVERED, FAILED, HELD
from swarmforge.handoff.printout import task_text
from swarmforge.handoff.ready import ready_task
from tests.support import Project, git

NOTE = "type: note\nto: {to}\npriority: 50\nmessage: hello\n"


def send(project: Project, sender: str, to: str) -> str:
    project.draft(sender, NOTE.format(to=to), "d")
    return gate.queue_handoff("d", cwd=str(project.tree(sender)), role=sender)


def make_daemon(project: Project) -> Dispatcher:
    return Dispatcher(str(project.root), Waker(), logging.getLogger("test-hostile-repo"))


def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside"
    target.mkdir(exist_ok=True)
    return target


def files_in(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*"))


@pytest.mark.parametrize(
    "box",
    [".swarmforge", "handoffs", "inbox", Box.NEW, Box.IN_PROCESS, Box.COMPLETED],
)
def test_a_linked_inbox_is_refused_for_that_role_only(
    project: Project, tmp_path: Path, box: str
) -> None:
    target = outside(tmp_path)
    tree = project.tree("cleaner")
    rel = {".swarmforge": ".swarmforge", "handoffs": ".swarmforge/handoffs"}.get(
        box, Path(".swarmforge", "handoffs", box)
    )
    link = tree / rel
    if link.exists():
        link.rmdir()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)
    send(project, "coder", "cleaner,qa")
    daemon = make_daemon(project)
    (outcome,) = daemon.run_once()
    assert outcome.status == HELD and outcome.copied == ["qa"]
    assert str(link) in outcome.reason and "symbolic link" in outcome.reason
    assert files_in(target) == []
    assert len(project.names("qa", Box.NEW)) == 1
    # Held, not failed: the original waits in the sender's outbox for a repair.
    assert len(project.mailbox("coder").items(Box.OUTBOX)) == 1
    assert project.names("coder", Box.FAILED) == []
    with pytest.raises(UnsafeMailbox, match="UNSAFE_MAILBOX") as refused:
        ready_task(project.mailbox("cleaner"))
    assert str(link) in refused.value.message
    assert files_in(target) == []
    # Repaired, the next pass delivers the missing copy once.
    link.unlink()
    (outcome,) = daemon.run_once()
    assert outcome.status == DELIVERED and outcome.copied == ["cleaner"]
    assert len(project.names("qa", Box.NEW)) == 1


def test_a_link_never_deletes_queued_items(project: Project, tmp_path: Path) -> None:
    queued = project.enqueue(
        "cleaner",
        "50_20260101T000000Z_000001_from_coder_to_cleaner.handoff",
        {"id": "x", "from": "coder", "to": "cleaner", "priority": "50", "type": "note"},
    )
    target = outside(tmp_path)
    inbox = project.box("cleaner", "inbox")
    inbox.rename(tmp_path / "kept-inbox")
    inbox.symlink_to(target, target_is_directory=True)
    with pytest.raises(UnsafeMailbox):
        ready_task(project.mailbox("cleaner"))
    with pytest.raises(UnsafeMailbox):
        done_task(project.mailbox("cleaner"))
    make_daemon(project).run_once()
    assert files_in(target) == []
    assert (tmp_path / "kept-inbox" / "new" / queued.name).is_file()


@pytest.mark.parametrize("box", [Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED, "handoffs"])
def test_the_gate_refuses_a_linked_sending_box(project: Project, tmp_path: Path, box: str) -> None:
    target = outside(tmp_path)
    handoffs = project.tree("coder") / ".swarmforge" / "handoffs"
    link = handoffs if box == "handoffs" else handoffs / box
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_dir():
        link.rmdir()
    link.symlink_to(target, target_is_directory=True)
    with pytest.raises(UnsafeMailbox, match="UNSAFE_MAILBOX") as refused:
        send(project, "coder", "cleaner")
    assert str(link) in refused.value.message
    assert files_in(target) == []
    assert (project.tree("coder") / "d").exists()  # the draft is kept


def test_a_mailbox_box_that_is_a_file_is_refused(project: Project) -> None:
    handoffs = project.tree("coder") / ".swarmforge" / "handoffs"
    handoffs.mkdir(parents=True, exist_ok=True)
    (handoffs / "outbox").write_text("not a directory\n")
    with pytest.raises(UnsafeMailbox, match="outbox is a regular file, not a real directory"):
        send(project, "coder", "cleaner")


def test_the_daemon_leaves_a_linked_outbox_alone_and_serves_the_others(
    project: Project, tmp_path: Path
) -> None:
    send(project, "qa", "coder")
    target = outside(tmp_path)
    name = "50_20260101T000000Z_000001_from_cleaner_to_coder.handoff"
    (target / name).write_text("from: cleaner\nto: coder\n\nforged\n")
    link = project.box("cleaner", Box.OUTBOX)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)
    daemon = make_daemon(project)
    (outcome,) = daemon.run_once()
    assert outcome.status == DELIVERED and "from_qa_" in outcome.name
    assert (target / name).exists() and files_in(target) == [name]
    assert all(not p.startswith(str(link)) for p in daemon.outboxes())
    daemon.sweep()
    assert files_in(target) == [name]


def commit_file(tree: Path, rel: str, text: str) -> None:
    path = tree / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(tree, "add", "-f", rel)
    git(tree, "commit", "-q", "-m", "add")


def test_a_tracked_outbox_file_is_failed_never_delivered(project: Project) -> None:
    name = "50_20260101T000000Z_000001_from_coder_to_cleaner.handoff"
    text = (
        "id: 20260101T000000Z_000001_from_coder\nfrom: coder\nto: cleaner\n"
        "priority: 50\ntype: note\nmessage: forged\n\nforged\n"
    )
    commit_file(project.tree("coder"), f".swarmforge/handoffs/outbox/{name}", text)
    real = send(project, "coder", "cleaner")
    outcomes = {o.name: o for o in make_daemon(project).run_once()}
    assert outcomes[name].status == FAILED
    assert outcomes[name].reason == delivery.TRACKED
    assert outcomes[Path(real).name].status == DELIVERED
    assert project.names("cleaner", Box.NEW) == [Path(real).name]
    failed = project.box("coder", Box.FAILED)
    assert (failed / f"{name}.error").read_text() == delivery.TRACKED + "\n"


def test_doctor_fails_on_tracked_state_dirs(repo: Path) -> None:
    assert check_tracked_state(str(repo)).status == "ok"
    commit_file(repo, ".swarmforge/roles.tsv", "x\n")
    commit_file(repo, ".worktrees/coder/file", "x\n")
    found = check_tracked_state(str(repo))
    assert found.status == "FAIL"
    assert ".swarmforge/" in found.detail and ".worktrees/" in found.detail
    assert "git rm -r --cached" in found.fix


def test_doctor_outside_git_has_no_tracked_state(tmp_path: Path) -> None:
    assert check_tracked_state(str(tmp_path)).status == "ok"


@pytest.mark.parametrize("state_dir", [".swarmforge", ".worktrees"])
def test_a_commit_carrying_swarm_state_is_flagged_in_the_printout(
    project: Project, state_dir: str
) -> None:
    tree = project.tree("coder")
    planted = tree / state_dir / "planted" / "roles.tsv"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("x\n")
    git(tree, "add", "-f", str(planted))
    git(tree, "commit", "-q", "-m", "state")
    commit = git(tree, "rev-parse", "--short=10", "HEAD").strip()
    draft = f"type: git_handoff\nto: cleaner\npriority: 50\ntask: t\ncommit: {commit}\n"
    project.draft("coder", draft, "d")
    gate.queue_handoff("d", cwd=str(tree), role="coder")
    (outcome,) = make_daemon(project).run_once()
    assert outcome.status == DELIVERED
    task = ready_task(project.mailbox("cleaner"))
    assert task is not None
    warning = (
        f"WARNING: commit {commit} contains {state_dir}/, swarmforge's own state, "
        "which is never committed; do not merge it as it is"
    )
    lines = task_text(task).splitlines()
    assert lines[lines.index("TASK_NAME: t") + 1] == warning


def test_a_commit_without_swarm_state_carries_no_warning(project: Project) -> None:
    commit = project.commit("coder")
    draft = f"type: git_handoff\nto: cleaner\npriority: 50\ntask: t\ncommit: {commit}\n"
    project.draft("coder", draft, "d")
    gate.queue_handoff("d", cwd=str(project.tree("coder")), role="coder")
    make_daemon(project).run_once()
    task = ready_task(project.mailbox("cleaner"))
    assert task is not None and task.handoff.get("warning") is None
