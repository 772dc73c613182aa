"""The merge check at delivery: each copy of a git_handoff says how it merges into its recipient."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from swarmforge import eventread, events
from swarmforge.daemon import wake
from swarmforge.daemon.dispatcher import Dispatcher
from swarmforge.git import mergecheck
from swarmforge.handoff import gate, message, printout
from swarmforge.handoff.draft import Draft, HandoffInvalid
from swarmforge.handoff.mailbox import Box
from tests.support import Project, git, run_script
from tests.support import run_cli as sf

LOGGER = "test-merge-check"


@pytest.fixture
def swarm(repo: Path) -> Project:
    return Project(repo, {"coder": "task", "qa": "task", "cleaner": "batch"})


def commit_file(swarm: Project, role: str, path: str, text: str) -> str:
    """Commit `path` holding `text` in `role`'s worktree; the 10-character abbreviation."""
    tree = swarm.tree(role)
    (tree / path).write_text(text)
    git(tree, "add", path)
    git(tree, "commit", "-q", "-m", f"{role} writes {path}")
    return git(tree, "rev-parse", "--short=10", "HEAD")


def hand_over(swarm: Project, sender: str, to: str, commit: str) -> str:
    """Queue a git_handoff of `commit` through the gate; the outbox file's name."""
    swarm.draft(sender, f"type: git_handoff\nto: {to}\npriority: 50\ntask: t\ncommit: {commit}\n")
    path = gate.queue_handoff("draft.txt", cwd=str(swarm.tree(sender)), role=sender)
    return Path(path).name


def deliver(swarm: Project) -> None:
    """One pass of the daemon over the project's outboxes."""
    dispatcher = Dispatcher(str(swarm.root), wake.Waker(), logging.getLogger(LOGGER))
    try:
        dispatcher.run_once()
    finally:
        dispatcher.changed.close()


def copy_of(swarm: Project, role: str, name: str) -> message.Handoff:
    return message.read(str(swarm.box(role, Box.NEW) / name))


def conflicts_logged(swarm: Project) -> list[dict[str, object]]:
    chunk = eventread.read(events.log_path(str(swarm.root)))
    return [
        {k: v for k, v in e.items() if k != "ts"}
        for e in chunk.events
        if e["kind"] == "merge-conflict"
    ]


def test_a_commit_that_merges_cleanly_is_marked_clean(swarm: Project) -> None:
    name = hand_over(swarm, "coder", "qa", commit_file(swarm, "coder", "new.txt", "coder\n"))
    deliver(swarm)
    copy = copy_of(swarm, "qa", name)
    assert copy.get("merge_check") == "clean" and copy.get("merge_conflicts") is None
    assert conflicts_logged(swarm) == []


def test_a_conflict_names_its_paths_and_is_an_event(swarm: Project) -> None:
    for path in ("b.txt", "a.txt"):
        commit_file(swarm, "qa", path, "qa's version\n")
        commit_file(swarm, "coder", path, "coder's version\n")
    commit = commit_file(swarm, "coder", "c.txt", "no conflict here\n")
    name = hand_over(swarm, "coder", "qa", commit)
    deliver(swarm)
    copy = copy_of(swarm, "qa", name)
    assert copy.get("merge_check") == "conflict"
    assert copy.get("merge_conflicts") == "a.txt, b.txt"
    assert conflicts_logged(swarm) == [
        {
            "kind": "merge-conflict",
            "name": name,
            "role": "qa",
            "from": "coder",
            "commit": commit,
            "paths": ["a.txt", "b.txt"],
            "count": 2,
        }
    ]


def test_a_long_list_of_conflicts_is_cut_and_says_how_many_more(swarm: Project) -> None:
    paths = [f"f{i:02}.txt" for i in range(mergecheck.MAX_SHOWN + 3)]
    for role in ("qa", "coder"):
        for path in paths:
            (swarm.tree(role) / path).write_text(f"{role}\n")
        git(swarm.tree(role), "add", *paths)
        git(swarm.tree(role), "commit", "-q", "-m", "many")
    name = hand_over(
        swarm, "coder", "qa", git(swarm.tree("coder"), "rev-parse", "--short=10", "HEAD")
    )
    deliver(swarm)
    shown = ", ".join(paths[: mergecheck.MAX_SHOWN])
    assert copy_of(swarm, "qa", name).get("merge_conflicts") == f"{shown} and 3 more"
    (event,) = conflicts_logged(swarm)
    assert event["paths"] == paths and event["count"] == len(paths)


def test_a_path_with_a_line_break_stays_on_one_line(swarm: Project) -> None:
    commit_file(swarm, "qa", "odd\nname.txt", "qa's version\n")
    commit = commit_file(swarm, "coder", "odd\nname.txt", "coder's version\n")
    name = hand_over(swarm, "coder", "qa", commit)
    deliver(swarm)
    assert copy_of(swarm, "qa", name).get("merge_conflicts") == "odd\\x0aname.txt"


def outbox_handoff(swarm: Project, sender: str, handoff: message.Handoff, name: str) -> None:
    """Put a finished handoff in `sender`'s outbox, as the gate installs one."""
    box = swarm.mailbox(sender)
    box.ensure(Box.OUTBOX_TMP)
    tmp = Path(box.path(Box.OUTBOX_TMP, "." + name + ".tmp"))
    tmp.write_bytes(handoff.render())
    tmp.rename(box.path(Box.OUTBOX, name))


def test_a_commit_the_repository_lacks_is_marked_missing(swarm: Project) -> None:
    # The gate checked it once; since then it is gone (a history rewritten, say).
    name, handoff = gate.build(
        Draft("git_handoff", ["qa"], "50", task="t", commit="deadbeef00"), "coder", "000001", 0
    )
    outbox_handoff(swarm, "coder", handoff, name)
    deliver(swarm)
    copy = copy_of(swarm, "qa", name)
    assert copy.get("merge_check") == "missing-commit" and copy.get("merge_conflicts") is None
    assert conflicts_logged(swarm) == []
    task = printout.Task("/x", copy)
    assert "MERGE CHECK: commit deadbeef00 is not in the repository\n" in printout.task_text(task)


def test_a_branch_spelled_like_the_commit_does_not_stand_in_for_it(swarm: Project) -> None:
    commit_file(swarm, "qa", "shared.txt", "qa's version\n")
    clean = commit_file(swarm, "coder", "new.txt", "coder\n")
    name = hand_over(swarm, "coder", "qa", clean)
    # A branch named like the commit, at a commit that would conflict.
    commit_file(swarm, "coder", "shared.txt", "coder's version\n")
    git(swarm.tree("coder"), "branch", clean)
    deliver(swarm)
    assert copy_of(swarm, "qa", name).get("merge_check") == "clean"


def test_each_recipient_gets_the_result_for_its_own_branch(swarm: Project) -> None:
    commit_file(swarm, "qa", "shared.txt", "qa's version\n")
    commit = commit_file(swarm, "coder", "shared.txt", "coder's version\n")
    name = hand_over(swarm, "coder", "qa,cleaner", commit)
    deliver(swarm)
    qa, cleaner = copy_of(swarm, "qa", name), copy_of(swarm, "cleaner", name)
    assert (qa.get("merge_check"), qa.get("merge_conflicts")) == ("conflict", "shared.txt")
    assert (cleaner.get("merge_check"), cleaner.get("merge_conflicts")) == ("clean", None)
    assert [e["role"] for e in conflicts_logged(swarm)] == ["qa"]
    # Only each copy differs: the original handed over carries no result.
    assert message.read(str(swarm.box("coder", Box.SENT) / name)).get("merge_check") is None


def snapshot(tree: Path) -> tuple[str, str, str, int, bytes]:
    """What a merge check must leave as it was: status, branch, HEAD and the index."""
    index = Path(git(tree, "rev-parse", "--git-path", "index"))
    index = index if index.is_absolute() else tree / index
    return (
        # The mailboxes aside: delivery writes there, and this repository does not ignore them.
        # --no-optional-locks: status itself would otherwise refresh the index it looks at.
        git(tree, "--no-optional-locks", "status", "--porcelain", "-uall", "--", ":!.swarmforge"),
        git(tree, "symbolic-ref", "-q", "HEAD"),
        git(tree, "rev-parse", "HEAD"),
        index.stat().st_mtime_ns,
        index.read_bytes(),
    )


def test_the_recipients_worktree_index_and_head_are_untouched(swarm: Project) -> None:
    commit_file(swarm, "qa", "shared.txt", "qa's version\n")
    commit = commit_file(swarm, "coder", "shared.txt", "coder's version\n")
    qa = swarm.tree("qa")
    # qa is in the middle of its own work: a change staged, one not, a new file.
    (qa / "README").write_text("qa edits\n")
    (qa / "staged.txt").write_text("staged\n")
    git(qa, "add", "staged.txt")
    (qa / "shared.txt").write_text("qa edits it again\n")
    (qa / "untracked.txt").write_text("new\n")
    name = hand_over(swarm, "coder", "qa", commit)
    before = {role: snapshot(swarm.tree(role)) for role in ("qa", "coder")}
    time.sleep(0.01)  # a rewritten index would have a later time
    deliver(swarm)
    assert copy_of(swarm, "qa", name).get("merge_check") == "conflict"
    assert {role: snapshot(swarm.tree(role)) for role in ("qa", "coder")} == before


@pytest.mark.parametrize("field", ["merge_check", "merge_conflicts"])
def test_a_draft_cannot_forge_a_result(swarm: Project, field: str) -> None:
    commit = commit_file(swarm, "coder", "new.txt", "coder\n")
    swarm.draft(
        "coder",
        f"type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: {commit}\n{field}: clean\n",
    )
    with pytest.raises(HandoffInvalid) as refused:
        gate.queue_handoff("draft.txt", cwd=str(swarm.tree("coder")), role="coder")
    assert refused.value.errors == [
        f"Line 6: header '{field}' is reserved and must not be written by agents."
    ]


def test_a_result_forged_past_the_gate_never_reaches_a_copy(swarm: Project) -> None:
    name, note = gate.build(Draft("note", ["qa"], "50", message="m"), "coder", "000001", 0)
    forged = note.with_header("merge_check", "clean").with_header("merge_conflicts", "none")
    outbox_handoff(swarm, "coder", forged, name)
    deliver(swarm)
    copy = copy_of(swarm, "qa", name)
    assert copy.get("merge_check") is None and copy.get("merge_conflicts") is None


def test_the_printout_shows_the_result(swarm: Project) -> None:
    commit_file(swarm, "qa", "shared.txt", "qa's version\n")
    commit = commit_file(swarm, "coder", "shared.txt", "coder's version\n")
    name = hand_over(swarm, "coder", "qa,cleaner", commit)
    deliver(swarm)
    task = run_script("ready_for_next.sh", swarm.tree("qa"), "qa")
    assert task.returncode == 0, task.stderr
    assert "\nMERGE CHECK: conflict in shared.txt\nPAYLOAD:\n" in task.stdout
    batch = run_script("ready_for_next.sh", swarm.tree("cleaner"), "cleaner")
    assert batch.returncode == 0, batch.stderr
    assert f"/{name}\n" in batch.stdout and "\nMERGE CHECK: clean\nPAYLOAD:\n" in batch.stdout


def test_a_note_has_no_result_and_no_line(swarm: Project) -> None:
    name, note = gate.build(Draft("note", ["qa"], "50", message="m"), "coder", "000001", 0)
    outbox_handoff(swarm, "coder", note, name)
    deliver(swarm)
    copy = copy_of(swarm, "qa", name)
    assert copy.get("merge_check") is None
    assert "MERGE CHECK" not in printout.task_text(printout.Task("/x", copy))


def test_a_check_git_cannot_answer_delivers_without_a_result_and_logs_once(
    swarm: Project, caplog: pytest.LogCaptureFixture
) -> None:
    commit = commit_file(swarm, "coder", "new.txt", "coder\n")
    # qa's HEAD names a branch with no commit yet: there is nothing to merge into.
    git(swarm.tree("qa"), "symbolic-ref", "HEAD", "refs/heads/unborn")
    name = hand_over(swarm, "coder", "qa,cleaner", commit)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        deliver(swarm)
        deliver(swarm)  # nothing left to deliver, nothing said again
    qa = copy_of(swarm, "qa", name)
    assert qa.get("merge_check") is None and qa.get("recipient") == "qa"
    assert copy_of(swarm, "cleaner", name).get("merge_check") == "clean"
    assert (swarm.box("coder", Box.SENT) / name).exists()
    skipped = [r.getMessage() for r in caplog.records if "merge check" in r.getMessage()]
    assert len(skipped) == 1
    assert skipped[0].startswith(f"merge check of {name} for qa skipped: 'git merge-tree' exited 1")


def test_the_daemon_process_checks_and_records_a_conflict(swarm: Project) -> None:
    commit_file(swarm, "qa", "shared.txt", "qa's version\n")
    commit = commit_file(swarm, "coder", "shared.txt", "coder's version\n")
    name = hand_over(swarm, "coder", "qa", commit)
    r = sf(
        "daemon", "run", "--once", "--notify", "none", "--project", str(swarm.root), cwd=swarm.root
    )
    assert r.returncode == 0, r.stderr
    assert copy_of(swarm, "qa", name).get("merge_conflicts") == "shared.txt"
    assert [(e["role"], e["commit"]) for e in conflicts_logged(swarm)] == [("qa", commit)]
