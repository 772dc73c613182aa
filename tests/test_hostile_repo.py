"""Repository content posing as mailbox state: links, tracked handoffs, tracked state dirs.

The state lies in the common git directory (swarmforge/statedir.py); each checkout's
`.swarmforge` is a view of it, a symbolic link. A link or a file at a box inside the
state is refused, for that role only; whatever stands in place of the view itself (a
link aimed elsewhere, a file, a directory a commit brought) is moved aside whole, never
read, and the view made again.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from swarmforge import statedir
from swarmforge.daemon.dispatcher import SENDING, Dispatcher
from swarmforge.daemon.keeping import Keeper
from swarmforge.daemon.wake import Waker
from swarmforge.doctor.repository import check_tracked_state
from swarmforge.git.project import ensure_excludes_locked
from swarmforge.handoff import gate
from swarmforge.handoff.done import done_task
from swarmforge.handoff.mailbox import FLOW, Box, Mailbox, UnsafeMailbox
from swarmforge.handoff.outcome import DELIVERED, HELD
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


def ensure_boxes(project: Project, role: str) -> Mailbox:
    """The role's mailbox with all its boxes, and its checkout's view, as `up` and a first
    handoff leave them."""
    mailbox = project.mailbox(role)
    mailbox.ensure(*FLOW, *SENDING)
    assert view_of(project, role).is_symlink()
    return mailbox


def view_of(project: Project, role: str) -> Path:
    """The `.swarmforge` view in the role's checkout."""
    return project.tree(role) / ".swarmforge"


def is_view(project: Project, role: str) -> bool:
    """The role's `.swarmforge` is the link to its state, as statedir makes it."""
    view = view_of(project, role)
    return view.is_symlink() and view.resolve() == Path(project.mailbox(role).state).resolve()


def set_aside(project: Project) -> list[Path]:
    """What was found in the place of a view and moved aside, by name."""
    kept = Path(statedir.of(str(project.root)), statedir.SET_ASIDE)
    return sorted(kept.iterdir()) if kept.exists() else []


def heals(project: Project) -> list[dict[str, object]]:
    """The `state-view-healed` events logged so far."""
    path = Path(statedir.path(str(project.root), ".swarmforge/events.jsonl"))
    lines = path.read_text().splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e["kind"] == "state-view-healed"]


def replace_box(link: Path, target: Path) -> None:
    """Put a symbolic link to `target` where the mailbox directory `link` is."""
    if link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)


def real_box(mailbox: Mailbox, box: str) -> Path:
    """The real path of `box` in `mailbox`: "state" is the checkout's state directory
    itself, "handoffs" the mailbox root."""
    return Path({"state": mailbox.state, "handoffs": mailbox.root}.get(box, mailbox.path(box)))


@pytest.mark.parametrize(
    "box",
    ["state", "handoffs", "inbox", Box.NEW, Box.IN_PROCESS, Box.COMPLETED],
)
def test_a_linked_inbox_is_refused_for_that_role_only(
    project: Project, tmp_path: Path, box: str
) -> None:
    # A link at a box in the real state (put there through the view, by an agent or a
    # build step), or at the state directory itself, is refused: the chain of checks
    # starts at the state directory.
    target = outside(tmp_path)
    link = real_box(ensure_boxes(project, "cleaner"), box)
    replace_box(link, target)
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
    assert len(project.names("cleaner", Box.NEW)) == 1
    assert is_view(project, "cleaner")
    assert heals(project) == [] and set_aside(project) == []  # the view was never touched


# First in name order, and so the first task taken, were it ever in a real queue.
FORGED = "10_20260101T000000Z_000009_from_coder_to_{to}.handoff"


def forged_handoff(to: str) -> str:
    return (
        f"id: 20260101T000000Z_000009_from_coder\nfrom: coder\nto: {to}\nrecipient: {to}\n"
        "priority: 10\ntype: note\nmessage: forged\n\nforged\n"
    )


def plant_forged_inbox(directory: Path, to: str) -> Path:
    """A state directory's look-alike at `directory`, a forged handoff queued in it."""
    new = directory / "handoffs" / Box.NEW
    new.mkdir(parents=True)
    forged = new / FORGED.format(to=to)
    forged.write_text(forged_handoff(to))
    return forged


@pytest.mark.parametrize("kind", ["link", "directory", "file"])
def test_an_impostor_in_place_of_the_view_is_set_aside_and_the_mail_delivered(
    project: Project, tmp_path: Path, kind: str
) -> None:
    mailbox = ensure_boxes(project, "cleaner")
    queued = project.enqueue(
        "cleaner",
        "50_20260101T000000Z_000001_from_qa_to_cleaner.handoff",
        {"id": "q", "from": "qa", "to": "cleaner", "priority": "50", "type": "note"},
    )
    view = view_of(project, "cleaner")
    view.unlink()
    target = outside(tmp_path)
    if kind == "link":  # a view aimed elsewhere, at a look-alike of the state
        forged = plant_forged_inbox(target, "cleaner")
        view.symlink_to(target, target_is_directory=True)
    elif kind == "directory":  # what a commit tracking `.swarmforge/` leaves on checkout
        forged = plant_forged_inbox(view, "cleaner")
    else:
        view.write_text("not a directory\n")
    before = files_in(target)
    real = send(project, "coder", "cleaner,qa")
    (outcome,) = make_daemon(project).run_once()
    assert outcome.status == DELIVERED and sorted(outcome.copied) == ["cleaner", "qa"]
    # Delivered into the real mailbox, beside what was queued there; the view made again.
    assert mailbox.items(Box.NEW) == sorted([str(queued), mailbox.path(Box.NEW, Path(real).name)])
    assert is_view(project, "cleaner")
    assert files_in(target) == before  # nothing written through the impostor
    # The impostor is kept whole, never read as state.
    [kept] = set_aside(project)
    assert kept.name.startswith("cleaner-")
    if kind == "link":
        assert kept.is_symlink() and kept.readlink() == target
        assert forged.read_text() == forged_handoff("cleaner")
    elif kind == "directory":
        assert (kept / "handoffs" / Box.NEW / forged.name).read_text() == forged_handoff("cleaner")
    else:
        assert kept.read_text() == "not a directory\n"
    assert [(e["checkout"], e["found"], e["set_aside"]) for e in heals(project)] == [
        (str(project.tree("cleaner")), "replaced", str(kept))
    ]
    # The role is given its real queue only, never the forged handoff.
    task = ready_task(mailbox)
    assert task is not None and "forged" not in task_text(task)
    assert FORGED.format(to="cleaner") not in files_in(Path(mailbox.state))


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


@pytest.mark.parametrize(
    "box", [Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED, "handoffs", "state"]
)
def test_the_gate_refuses_a_linked_sending_box(project: Project, tmp_path: Path, box: str) -> None:
    target = outside(tmp_path)
    link = real_box(ensure_boxes(project, "coder"), box)
    replace_box(link, target)
    with pytest.raises(UnsafeMailbox, match="UNSAFE_MAILBOX") as refused:
        send(project, "coder", "cleaner")
    assert str(link) in refused.value.message
    assert files_in(target) == []
    assert (project.tree("coder") / "d").exists()  # the draft is kept


def test_the_gate_queues_in_the_real_outbox_past_a_linked_view(
    project: Project, tmp_path: Path
) -> None:
    ensure_boxes(project, "coder")
    target = outside(tmp_path)
    (target / "handoffs" / Box.OUTBOX).mkdir(parents=True)
    view = view_of(project, "coder")
    view.unlink()
    view.symlink_to(target, target_is_directory=True)
    real = Path(send(project, "coder", "cleaner"))
    assert real.parent == project.box("coder", Box.OUTBOX)
    assert files_in(target) == ["handoffs", "outbox"]  # nothing written through it
    assert is_view(project, "coder")
    [kept] = set_aside(project)
    assert kept.is_symlink() and kept.readlink() == target
    assert not (project.tree("coder") / "d").exists()  # the draft was taken


def test_a_mailbox_box_that_is_a_file_is_refused(project: Project) -> None:
    outbox = project.box("coder", Box.OUTBOX)
    outbox.parent.mkdir(parents=True, exist_ok=True)
    outbox.write_text("not a directory\n")
    with pytest.raises(UnsafeMailbox, match="outbox is a regular file, not a real directory") as e:
        send(project, "coder", "cleaner")
    assert str(outbox) in e.value.message
    assert outbox.read_text() == "not a directory\n"


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


def merge_from_elsewhere(project: Project, role: str, files: dict[str, str]) -> str:
    """Merge into `role`'s worktree a commit made in another clone that tracks `files`
    (path -> text), as a pull from a colleague would bring it; the commit's abbreviation.

    info/exclude says `.swarmforge` as `up` writes it: git then takes the view for an
    ignored file it may overwrite, and puts a directory of the commit's in its place.
    """
    ensure_excludes_locked(project.root / ".git")
    elsewhere = project.root.parent / "elsewhere"
    git(project.root.parent, "clone", "-q", str(project.root), str(elsewhere))
    for rel, text in files.items():
        commit_file(elsewhere, rel, text)
    tree = project.tree(role)
    git(tree, "fetch", "-q", str(elsewhere), "HEAD")
    git(tree, "merge", "-q", "--ff-only", "FETCH_HEAD")
    return git(tree, "rev-parse", "--short=10", "HEAD")


def test_tracked_state_merged_over_the_view_is_set_aside_never_delivered(
    project: Project,
) -> None:
    real = send(project, "coder", "cleaner")  # queued, not yet delivered
    assert is_view(project, "coder")
    outbox_name = FORGED.format(to="cleaner")
    inbox_name = FORGED.format(to="coder")
    merge_from_elsewhere(
        project,
        "coder",
        {
            f".swarmforge/handoffs/outbox/{outbox_name}": forged_handoff("cleaner"),
            f".swarmforge/handoffs/inbox/new/{inbox_name}": forged_handoff("coder"),
        },
    )
    view = view_of(project, "coder")
    assert view.is_dir() and not view.is_symlink()  # git put the commit's files there
    # The real mailbox is out of git's reach: the queued handoff is still there, alone.
    coder = project.mailbox("coder")
    assert coder.items(Box.OUTBOX) == [real]
    assert coder.items(Box.NEW) == []
    daemon = make_daemon(project)
    outcomes = daemon.run_once()
    assert [(o.name, o.status) for o in outcomes] == [(Path(real).name, DELIVERED)]
    assert project.names("cleaner", Box.NEW) == [Path(real).name]
    assert project.names("coder", Box.FAILED) == []  # never even looked at
    # The daemon's keeping pass heals the view; the commit's files are kept aside.
    Keeper(str(project.root), daemon.log, lambda role: None).poll(daemon.roles, force=True)
    assert is_view(project, "coder")
    [kept] = set_aside(project)
    assert kept.name.startswith("coder-")
    assert files_in(kept / "handoffs") == sorted(
        ["inbox", "new", inbox_name, "outbox", outbox_name]
    )
    assert ready_task(coder) is None  # the forged inbox is no mail
    assert project.names("cleaner", Box.NEW) == [Path(real).name]
    assert daemon.run_once() == []


def test_a_tracked_state_directory_is_never_taken_in_as_state(project: Project) -> None:
    # A `.swarmforge/` that git tracks came with a commit, before any state of ours: it is
    # not an older version's state to move in, but set aside whole once the state is made.
    tree = project.tree("coder")
    placed = statedir.placed(str(tree))
    assert placed is not None and not Path(placed[0]).exists()
    name = "50_20260101T000000Z_000001_from_coder_to_cleaner.handoff"
    text = (
        "id: 20260101T000000Z_000001_from_coder\nfrom: coder\nto: cleaner\n"
        "priority: 50\ntype: note\nmessage: forged\n\nforged\n"
    )
    commit_file(tree, f".swarmforge/handoffs/outbox/{name}", text)
    assert statedir.of(str(tree)) == placed[0] and not Path(placed[0]).exists()  # left be
    real = send(project, "coder", "cleaner")
    assert is_view(project, "coder")
    [kept] = set_aside(project)
    assert (kept / "handoffs" / "outbox" / name).read_text() == text
    outcomes = {o.name: o for o in make_daemon(project).run_once()}
    assert list(outcomes) == [Path(real).name]
    assert outcomes[Path(real).name].status == DELIVERED
    assert project.names("cleaner", Box.NEW) == [Path(real).name]
    assert project.names("coder", Box.FAILED) == []


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
    queued = send(project, "coder", "cleaner")  # waiting in the real outbox meanwhile
    commit = merge_from_elsewhere(project, "coder", {f"{state_dir}/planted/roles.tsv": "x\n"})
    draft = f"type: git_handoff\nto: cleaner\npriority: 50\ntask: t\ncommit: {commit}\n"
    project.draft("coder", draft, "d")
    flagged = gate.queue_handoff("d", cwd=str(project.tree("coder")), role="coder")
    outcomes = make_daemon(project).run_once()
    assert [(o.name, o.status) for o in outcomes] == [
        (Path(queued).name, DELIVERED),
        (Path(flagged).name, DELIVERED),
    ]
    warning = (
        f"WARNING: commit {commit} contains {state_dir}/, swarmforge's own state, "
        "which is never committed; do not merge it as it is"
    )
    texts = []
    cleaner = project.mailbox("cleaner")
    while (task := ready_task(cleaner)) is not None:
        texts.append(task_text(task).splitlines())
        done_task(cleaner)
    [lines] = [t for t in texts if "TASK_NAME: t" in t]
    assert lines[lines.index("TASK_NAME: t") + 1] == warning
    # The state the commit carried is none of the real state.
    assert is_view(project, "coder")
    assert not (Path(project.mailbox("coder").state) / "planted").exists()
    if state_dir == ".swarmforge":
        [kept] = set_aside(project)  # by the mailbox's next use (the gate's) healing the view
        assert (kept / "planted" / "roles.tsv").read_text() == "x\n"
    else:
        assert set_aside(project) == []


def test_a_commit_without_swarm_state_carries_no_warning(project: Project) -> None:
    commit = project.commit("coder")
    draft = f"type: git_handoff\nto: cleaner\npriority: 50\ntask: t\ncommit: {commit}\n"
    project.draft("coder", draft, "d")
    gate.queue_handoff("d", cwd=str(project.tree("coder")), role="coder")
    make_daemon(project).run_once()
    task = ready_task(project.mailbox("cleaner"))
    assert task is not None and task.handoff.get("warning") is None
