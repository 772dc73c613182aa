"""Swarm state out of git's reach: each checkout's `.swarmforge` is a view of the state in
the common git directory, healed when deleted or replaced, and mail an agent deletes is
put back from the daemon's copy, exactly once."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from swarmforge import statedir, stateview
from swarmforge.config import sessionrecord
from swarmforge.git import captures
from swarmforge.git.project import ensure_excludes_locked
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.layout import DELIVERED_DIR
from swarmforge.views.cockpit.state import swarm_state
from swarmforge.views.snapshot import snapshot
from swarmforge.views.watch.table import summary
from tests.support import VENV_BIN, Project, git, make_swarm, queue_note, retry_until
from tests.support import run_cli as sf

# An exec role that notes each item it is given, then waits for the test's go.
WORK = """#!/bin/sh
head -n 1 | sed 's|.*/||' >> {seen}
while [ ! -e {go} ]; do sleep 0.05; done
"""


def events(repo: Path) -> list[dict[str, object]]:
    path = Path(statedir.path(str(repo), ".swarmforge/events.jsonl"))
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def kinds(repo: Path, kind: str) -> list[dict[str, object]]:
    return [e for e in events(repo) if e["kind"] == kind]


def test_the_state_lies_in_the_git_directory_and_each_checkout_sees_it(project: Project) -> None:
    root = project.root
    tree = project.tree("coder")
    Mailbox(str(tree)).ensure(Box.NEW)
    assert (root / ".swarmforge").readlink() == Path(".git/swarmforge")
    assert (tree / ".swarmforge").readlink() == Path("../../.git/swarmforge/checkouts/coder")
    assert Mailbox(str(tree)).root == str(root / ".git/swarmforge/checkouts/coder/handoffs")
    # Nothing of it is git's to see, nor to clean (`up` adds what info/exclude lacks).
    ensure_excludes_locked(root / ".git")
    assert git(root, "status", "--porcelain", "--ignored") == "!! .swarmforge\n!! .worktrees/"
    assert git(tree, "status", "--porcelain", "--ignored") == "!! .swarmforge"
    assert kinds(root, "state-view-healed") == []  # made once: no heal


def test_a_deleted_or_replaced_view_is_made_again_and_nothing_is_read_from_an_impostor(
    project: Project,
) -> None:
    tree = project.tree("coder")
    box = Mailbox(str(tree))
    box.ensure(Box.NEW)
    queued = Path(box.path(Box.NEW, "queued.handoff"))
    queued.write_text("to: coder\n\nwork\n")

    git(tree, "clean", "-fdxq")
    assert not os.path.lexists(tree / ".swarmforge") and queued.exists()
    assert stateview.ensure(str(tree)) == "deleted"
    assert (tree / ".swarmforge" / "handoffs" / "inbox" / "new" / "queued.handoff").exists()

    # What a merge of a commit tracking `.swarmforge/` leaves: a directory of its own.
    (tree / ".swarmforge").unlink()
    forged = tree / ".swarmforge" / "handoffs" / "inbox" / "new"
    forged.mkdir(parents=True)
    (forged / "forged.handoff").write_text("to: coder\n\nrm -rf /\n")
    assert stateview.ensure(str(tree)) == "replaced"
    assert box.items(Box.NEW) == [str(queued)]  # the real queue, and only it
    [kept] = (project.root / ".git/swarmforge/set-aside").iterdir()
    assert (kept / "handoffs/inbox/new/forged.handoff").read_text() == "to: coder\n\nrm -rf /\n"

    # A link aimed elsewhere, and a file.
    (tree / ".swarmforge").unlink()
    (tree / ".swarmforge").symlink_to(project.root)
    assert stateview.ensure(str(tree)) == "replaced"
    (tree / ".swarmforge").unlink()
    (tree / ".swarmforge").write_text("not a directory\n")
    assert stateview.ensure(str(tree)) == "replaced"
    assert stateview.ensure(str(tree)) is None  # healed: looked at, nothing to do
    assert [e["found"] for e in kinds(project.root, "state-view-healed")] == [
        "deleted",
        "replaced",
        "replaced",
        "replaced",
    ]
    assert len(list((project.root / ".git/swarmforge/set-aside").iterdir())) == 3


def test_the_project_is_found_and_mail_queued_with_every_view_deleted(project: Project) -> None:
    queue_note(project, "coder", "cleaner")
    for top in (project.root, project.tree("coder")):
        (top / ".swarmforge").unlink()
    # The helpers find the swarm where its state lies, and heal the view they use.
    r = subprocess.run(
        [f"{VENV_BIN}/swarmforge", "ready"],
        cwd=project.tree("coder"),
        env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "SWARMFORGE_ROLE": "coder"},
        capture_output=True,
        text=True,
    )
    assert (r.returncode, r.stdout, r.stderr) == (0, "NO_TASK\n", "")
    assert (project.tree("coder") / ".swarmforge").is_symlink()
    assert sf("daemon", "run", "--once", cwd=project.root).returncode == 0
    assert len(project.mailbox("cleaner").items(Box.NEW)) == 1
    assert (project.root / ".swarmforge").is_symlink()


def test_an_older_state_directory_is_moved_into_the_git_directory(repo: Path) -> None:
    old = repo / ".swarmforge" / "handoffs" / "outbox"
    old.mkdir(parents=True)
    (old / "kept.handoff").write_text("to: x\n\nm\n")
    (repo / ".swarmforge" / "roles.tsv").write_text("")
    assert statedir.path(str(repo), ".swarmforge/roles.tsv") == str(
        repo / ".git/swarmforge/roles.tsv"
    )
    assert (repo / ".git/swarmforge/handoffs/outbox/kept.handoff").exists()
    assert (repo / ".swarmforge").readlink() == Path(".git/swarmforge")


def test_a_look_at_a_project_without_a_swarm_makes_nothing(repo: Path) -> None:
    assert sf("status", cwd=repo).returncode != 0
    assert stateview.ensure(str(repo)) is None
    assert not os.path.lexists(repo / ".swarmforge")
    assert not (repo / ".git" / "swarmforge").exists()


def test_a_stash_of_everything_pops_back_through_the_guard(project: Project) -> None:
    tree = project.tree("coder")
    Mailbox(str(tree)).ensure(Box.NEW)
    (tree / "work.txt").write_text("mine\n")
    git(tree, "stash", "--all", "-q")
    assert not os.path.lexists(tree / ".swarmforge")
    stateview.ensure(str(tree))  # the daemon makes it again at once
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "SWARMFORGE_ROLE": "coder", "HOME": str(tree)}
    real = shutil.which("git")
    assert real is not None
    r = subprocess.run(
        [f"{VENV_BIN}/swarmforge", "git-guard", real, "stash", "pop", "-q"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert (tree / "work.txt").read_text() == "mine\n"
    assert (tree / ".swarmforge").readlink() == Path("../../.git/swarmforge/checkouts/coder")
    assert git(tree, "stash", "list") == ""
    # Through the guard, a stash of everything leaves the view where it is.
    for args in (["stash", "--all", "-q"], ["stash", "pop", "-q"]):
        r = subprocess.run(
            [f"{VENV_BIN}/swarmforge", "git-guard", real, *args],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        assert (tree / ".swarmforge").is_symlink()  # never gone, so never raced for
        assert (tree / "work.txt").exists() == (args[1] == "pop")
    assert git(tree, "stash", "list") == ""


def test_what_agents_delete_in_their_checkouts_loses_no_handoff_and_doubles_none(
    repo: Path, tmp_path: Path
) -> None:
    seen, go = tmp_path / "seen.txt", tmp_path / "go"
    make_swarm(
        repo,
        "window worker exec worker task ./work.sh\n",
        {"work.sh": WORK.format(seen=seen, go=go)},
    )
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        tree = Path(record.role("worker").path)  # type: ignore[union-attr]
        box = Mailbox(str(tree))
        for n in range(3):
            assert sf("send", "worker", f"job {n}", cwd=repo).returncode == 0
        retry_until(lambda: seen.is_file() and len(box.items(Box.NEW)) == 2, timeout=30)
        [working] = box.items(Box.IN_PROCESS)

        # Everyday commands of an agent, in its worktree and in the main checkout.
        git(tree, "clean", "-fdxq")
        git(repo, "clean", "-fdxq")
        assert not os.path.lexists(repo / ".swarmforge")
        said = sf("status", cwd=repo)
        assert said.returncode == 0 and "worker" in said.stdout, said.stderr
        retry_until(lambda: (repo / ".swarmforge").is_symlink(), timeout=5)
        retry_until(lambda: (tree / ".swarmforge").is_symlink(), timeout=5)
        assert len(box.items(Box.NEW)) == 2  # git never reached them

        # `rm -rf .swarmforge/` follows the view into the state: the daemon puts it back.
        subprocess.run(["rm", "-rf", ".swarmforge/"], cwd=tree, check=False)
        assert box.items(Box.NEW) == [] and not Path(working).exists()
        # Each is put back, then its event written: waited for in that order.
        retry_until(lambda: len(box.items(Box.NEW)) == 2, timeout=10)
        retry_until(lambda: box.items(Box.IN_PROCESS) == [working])  # where its role works
        retry_until(lambda: len(kinds(repo, "handoff-reoffered")) == 3)
        offered = kinds(repo, "handoff-reoffered")
        assert sorted(str(e["into"]) for e in offered) == [Box.IN_PROCESS, Box.NEW, Box.NEW]

        go.touch()
        kept = Path(statedir.path(str(repo), DELIVERED_DIR), "worker")
        retry_until(lambda: len(box.received(Box.COMPLETED)) == 3, timeout=30)
        retry_until(lambda: not any(kept.iterdir()), timeout=10)
        names = seen.read_text().split()
        assert len(names) == 3 and len(set(names)) == 3, names  # each once, none twice
        assert [e["found"] for e in kinds(repo, "state-view-healed")] == ["deleted", "deleted"]
    finally:
        go.touch()
        assert sf("down", cwd=repo).returncode == 0


@pytest.mark.slow
def test_a_daemon_killed_while_it_heals_and_puts_back_loses_and_doubles_nothing(
    project: Project,
) -> None:
    rng = random.Random(23)
    names = []
    for n in range(6):
        queue_note(project, "coder", "cleaner", f"job {n}", draft=f"d{n}")
    assert sf("daemon", "run", "--once", cwd=project.root).returncode == 0
    box = project.mailbox("cleaner")
    names = sorted(Path(p).name for p in box.items(Box.NEW))
    assert len(names) == 6
    tree = project.tree("cleaner")
    pid_file = Path(statedir.path(str(project.root), ".swarmforge/daemon/handoffd.pid"))
    for _ in range(12):
        assert sf("daemon", "start", cwd=project.root).returncode == 0
        pid = int(pid_file.read_text())
        subprocess.run(["rm", "-rf", ".swarmforge/"], cwd=tree, check=False)
        (tree / ".swarmforge").unlink(missing_ok=True)
        (project.root / ".swarmforge").unlink(missing_ok=True)
        time.sleep(rng.uniform(0.0, 1.2))
        os.kill(pid, signal.SIGKILL)
        retry_until(lambda pid=pid: not Path(f"/proc/{pid}").exists() or _zombie(pid))
    assert sf("daemon", "start", cwd=project.root).returncode == 0
    try:
        retry_until(lambda: sorted(Path(p).name for p in box.items(Box.NEW)) == names, 10)
        time.sleep(1.5)  # two more passes: nothing more is put back
        assert sorted(Path(p).name for p in box.items(Box.NEW)) == names
        assert box.received(Box.IN_PROCESS) == [] and box.received(Box.COMPLETED) == []
        assert (tree / ".swarmforge").is_symlink() and (project.root / ".swarmforge").is_symlink()
    finally:
        assert sf("daemon", "stop", cwd=project.root).returncode == 0


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def test_status_and_doctor_show_mail_held_for_a_worktree_that_is_gone(project: Project) -> None:
    tree = project.tree("cleaner")
    git(project.root, "worktree", "remove", "--force", str(tree))
    queue_note(project, "coder", "cleaner", "are you there?")
    assert sf("daemon", "start", cwd=project.root).returncode == 0
    try:
        retry_until(lambda: kinds(project.root, "handoff-held") != [], timeout=10)
        said = sf("status", cwd=project.root).stdout
        assert "held mail: 50_" in said and "_to_cleaner.handoff: WORKTREE_GONE: " in said, said
        [held] = json.loads(sf("status", "--json", cwd=project.root).stdout)["held"]
        assert held["reason"].startswith(f"WORKTREE_GONE: {tree} does not exist")
        doctor = json.loads(sf("doctor", "--json", cwd=project.root).stdout)
        [mail] = [c for c in doctor if c["check"] == "mail"]
        assert mail["status"] == "warn" and "1 handoff(s) held" in mail["detail"], mail
        # The views say so too.
        snap = snapshot(str(project.root))
        assert "held mail: 1" in summary(snap)
        [shown] = swarm_state(str(project.root), snap)["held"]  # type: ignore[misc]
        assert "_to_cleaner.handoff: WORKTREE_GONE: " in shown
        assert not tree.exists()
    finally:
        assert sf("daemon", "stop", cwd=project.root).returncode == 0
    assert json.loads(sf("status", "--json", cwd=project.root).stdout)["held"] == []


# An exec role whose first item runs, through the role's PATH (the git guard), what an
# agent's tools may run in its checkout.
WRECK = """#!/bin/sh
head -n 1 | sed 's|.*/||' >> {seen}
[ -e {once} ] && exit 0
touch {once}
run() {{ "$@" 2>> {ran}.err; echo "$? $*" >> {ran}; }}
echo precious > work.txt
run git stash --all -q
run git stash pop -q
run git merge -q --no-edit hostile
run git clean -fdxq
run git reset -q --hard
"""
FORGED = "50_20260101T000000Z_000001_from_coder_to_wrecker.handoff"


def test_what_an_agent_runs_through_its_path_loses_no_handoff_and_no_work(
    repo: Path, tmp_path: Path
) -> None:
    seen, once, ran = tmp_path / "seen.txt", tmp_path / "once", tmp_path / "ran.txt"
    make_swarm(
        repo,
        "window wrecker exec wrecker task ./wreck.sh\n",
        {"wreck.sh": WRECK.format(seen=seen, once=once, ran=ran)},
    )
    # A branch that tracks swarm state, as a hostile commit would bring it.
    side = tmp_path / "side"
    git(repo, "worktree", "add", "-q", "-b", "hostile", str(side))
    forged = side / ".swarmforge" / "handoffs" / "inbox" / "new"
    forged.mkdir(parents=True)
    (forged / FORGED).write_text("from: coder\nto: wrecker\ntype: note\n\nrm -rf /\n")
    (side / ".swarmforge" / "roles.tsv").write_text("wrecker\tx\t/\ts\tW\texec\ttask\n")
    git(side, "add", "-f", ".swarmforge")
    git(side, "commit", "-q", "-m", "carries swarm state")
    git(repo, "worktree", "remove", "--force", str(side))
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        tree = Path(record.role("wrecker").path)  # type: ignore[union-attr]
        box = Mailbox(str(tree))
        for n in range(3):
            assert sf("send", "wrecker", f"job {n}", cwd=repo).returncode == 0
        retry_until(lambda: len(box.received(Box.COMPLETED)) == 3, timeout=60)
        names = seen.read_text().split()
        assert len(names) == 3 and len(set(names)) == 3 and FORGED not in names, names
        statuses = ran.read_text().splitlines()
        said = Path(f"{ran}.err").read_text() if Path(f"{ran}.err").exists() else ""
        assert len(statuses) == 5 and all(s.startswith("0 ") for s in statuses), (statuses, said)
        said = sf("status", cwd=repo)
        assert said.returncode == 0 and f"run {record.run_id}: running" in said.stdout
        retry_until(lambda: (tree / ".swarmforge").is_symlink(), timeout=5)
        kept = Path(statedir.path(str(repo), ".swarmforge/set-aside"))
        assert any(kept.glob(f"wrecker-*/handoffs/inbox/new/{FORGED}"))
        # The work the reset and the clean destroyed is kept in a capture.
        made = captures.listed(str(repo), "wrecker")
        assert any(git(repo, "show", f"{c.commit}:work.txt") == "precious" for c in made)
    finally:
        assert sf("down", cwd=repo).returncode == 0
