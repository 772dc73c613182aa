"""Worktree management on real repositories: names, create, list, remove, prune, rescue, lock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmforge import statedir, stateview
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.git.intents import intent_path
from swarmforge.git.lock import git_lock, lock_path
from swarmforge.git.names import branch_name, component_problem, rescue_ref
from swarmforge.git.project import ensure_repository
from swarmforge.git.prune import prune
from swarmforge.git.removing import remove
from swarmforge.git.worktrees import create, list_worktrees
from swarmforge.layout import HANDOFFS, ORPHANED_MAILBOXES
from swarmforge.locks import is_held
from tests.support import git, retry_until

RESCUE = "refs/swarmforge/rescue/r1/t1"


def _branches(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def _registered(repo: Path) -> list[str]:
    lines = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.split(" ", 1)[1] for line in lines if line.startswith("worktree ")]


def _hook(repo: Path, body: str) -> None:
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\n{body}\n")
    hook.chmod(0o755)


def _assert_nothing_left(repo: Path, name: str, branch: str) -> None:
    assert not (repo / ".worktrees" / name).exists()
    assert branch not in _branches(repo)
    assert _registered(repo) == [str(repo)]
    assert not list((repo / ".git").glob("worktrees/*"))  # no admin dir of git's left
    assert not Path(intent_path(str(repo), name)).exists()


# -- names --------------------------------------------------------------------------------


def test_branch_name() -> None:
    assert branch_name("r1", "coder") == "swarm/r1/coder"
    assert rescue_ref("r1", "coder") == "refs/swarmforge/rescue/r1/coder"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "a/b",
        "a b",
        "a\tb",
        "tab\x7f",
        "a..b",
        "-x",
        ".x",
        "x.lock",
        "x.",
        "a@{b",
        "@",
        "a~b",
        "a^b",
        "a:b",
        "a?b",
        "a*b",
        "a[b",
        "a\\b",
        "new\nline",
        "x" * 101,
    ],
)
def test_invalid_name_parts_are_refused_by_name(bad: str) -> None:
    with pytest.raises(SwarmforgeError, match="task id") as info:
        branch_name("r1", bad)
    assert repr(bad) in info.value.message
    with pytest.raises(SwarmforgeError, match="run id"):
        branch_name(bad, "t1")


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab-._@{}/~^: \t\x01*?[\\éü"), min_size=1, max_size=8))
def test_every_accepted_part_makes_a_branch_git_accepts(part: str) -> None:
    if component_problem(part) is None:
        result = subprocess.run(
            ["git", "check-ref-format", "--branch", branch_name(part, part)], capture_output=True
        )
        assert result.returncode == 0, part


# -- ensure_repository ---------------------------------------------------------------------


def test_a_plain_directory_becomes_a_repository_with_a_first_commit(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print(1)\n")
    checkout = ensure_repository(str(tmp_path))
    assert checkout.head is not None
    assert git(tmp_path, "ls-tree", "--name-only", "HEAD") == "app.py"
    ensure_repository(str(tmp_path))
    exclude = (tmp_path / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count(".swarmforge") == 1  # a link to the state: no trailing slash
    assert exclude.count(".worktrees/") == 1
    assert git(tmp_path, "rev-list", "--count", "HEAD") == "1"
    assert git(tmp_path, "status", "--porcelain") == ""


def test_an_existing_repository_gets_excludes_but_no_commit(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.log")  # no final newline
    ensure_repository(str(repo))
    assert git(repo, "rev-parse", "HEAD") == head
    excluded = (repo / ".git" / "info" / "exclude").read_text()
    assert excluded == "*.log\n.swarmforge\n.worktrees/\n/tmp/\n"


def test_first_commit_falls_back_to_a_swarmforge_identity(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "p"
    project.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home)}
    code = "import sys; from swarmforge.git.project import ensure_repository as e; e(sys.argv[1])"
    result = subprocess.run(
        [sys.executable, "-c", code, str(project)], env=env, capture_output=True
    )
    assert result.returncode == 0, result.stderr
    assert git(project, "log", "-1", "--format=%an <%ae>") == "swarmforge <swarmforge@localhost>"


def test_a_broken_dot_git_is_refused_not_reinitialised(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /nowhere\n")
    with pytest.raises(SwarmforgeError, match="not a usable git checkout"):
        ensure_repository(str(tmp_path))
    assert (tmp_path / ".git").read_text() == "gitdir: /nowhere\n"


def test_a_repository_without_commits_is_left_without_one(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert ensure_repository(str(tmp_path)).head is None
    assert ".worktrees/" in (tmp_path / ".git" / "info" / "exclude").read_text()


def test_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SwarmforgeError, match="does not exist"):
        ensure_repository(str(tmp_path / "nope"))


# -- create ------------------------------------------------------------------------------


def test_create_checks_out_a_new_branch_and_is_idempotent(repo: Path) -> None:
    tree = create(str(repo), "r1-t1", "swarm/r1/t1")
    assert tree.path == str(repo / ".worktrees" / "r1-t1")
    assert tree.head == git(repo, "rev-parse", "HEAD")
    assert git(Path(tree.path), "symbolic-ref", "--short", "HEAD") == "swarm/r1/t1"
    assert (Path(tree.path) / "README").read_text() == "project\n"
    assert create(str(repo), "r1-t1", "swarm/r1/t1") == tree
    assert list_worktrees(str(repo)) == [tree]
    assert not Path(intent_path(str(repo), "r1-t1")).exists()
    assert git(repo, "status", "--porcelain") == ""  # .worktrees/ and .swarmforge are excluded


def test_create_reuses_an_existing_branch_as_it_is(repo: Path) -> None:
    git(repo, "branch", "swarm/r1/t1")
    (repo / "later").write_text("x\n")
    git(repo, "add", "later")
    git(repo, "commit", "-q", "-m", "later")
    old = git(repo, "rev-parse", "swarm/r1/t1")
    tree = create(str(repo), "r1-t1", "swarm/r1/t1", base="main")
    assert tree.head == old
    assert not (Path(tree.path) / "later").exists()


def test_create_refuses_a_name_taken_by_another_branch(repo: Path) -> None:
    create(str(repo), "same", "swarm/r1/a")
    with pytest.raises(SwarmforgeError, match="'swarm/r1/b'"):
        create(str(repo), "same", "swarm/r1/b")
    assert "swarm/r1/b" not in _branches(repo)


def test_create_from_a_missing_base_leaves_nothing(repo: Path) -> None:
    with pytest.raises(SwarmforgeError, match="'no-such-base'"):
        create(str(repo), "t1", "swarm/r1/t1", base="no-such-base")
    _assert_nothing_left(repo, "t1", "swarm/r1/t1")


def test_a_failure_mid_create_rolls_back_what_it_made(repo: Path) -> None:
    _hook(repo, "exit 1")  # git has made the branch, admin dir and checkout by then
    with pytest.raises(SwarmforgeError, match="worktree add"):
        create(str(repo), "t1", "swarm/r1/t1")
    _assert_nothing_left(repo, "t1", "swarm/r1/t1")


def test_rollback_never_deletes_a_branch_that_existed(repo: Path) -> None:
    git(repo, "branch", "swarm/r1/t1")
    _hook(repo, "exit 1")
    with pytest.raises(SwarmforgeError):
        create(str(repo), "t1", "swarm/r1/t1")
    assert "swarm/r1/t1" in _branches(repo)
    assert _registered(repo) == [str(repo)]


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _crash_mid_create(repo: Path, name: str) -> None:
    """Run create in a child that the post-checkout hook kills with SIGKILL."""
    pid_file = repo.parent / "git.pid"
    _hook(repo, f'[ -n "$CRASH_PID" ] && echo $PPID > {pid_file} && kill -9 "$CRASH_PID"\nexit 0')
    code = (
        "import os, sys; os.environ['CRASH_PID'] = str(os.getpid())\n"
        "from swarmforge.git.worktrees import create; create(sys.argv[1], sys.argv[2], sys.argv[3])"
    )
    argv = [sys.executable, "-c", code, str(repo), name, f"swarm/r1/{name}"]
    assert subprocess.run(argv, capture_output=True).returncode == -9
    git_pid = int(pid_file.read_text())
    retry_until(lambda: _gone(git_pid))  # the killed child's git finishes on its own
    assert Path(intent_path(str(repo), name)).exists()
    assert f"swarm/r1/{name}" in _branches(repo)


def test_a_crashed_create_is_rolled_back_by_the_next_create(repo: Path) -> None:
    _crash_mid_create(repo, "crash")
    other = create(str(repo), "other", "swarm/r1/other")
    assert not (repo / ".worktrees" / "crash").exists()
    assert "swarm/r1/crash" not in _branches(repo)
    assert _registered(repo) == [str(repo), other.path]
    assert not Path(intent_path(str(repo), "crash")).exists()
    # The same name can be made afresh, and a stale intent never hides behind the fast path.
    assert create(str(repo), "crash", "swarm/r1/crash").head == other.head


def test_a_crashed_create_is_rolled_back_by_prune(repo: Path) -> None:
    _crash_mid_create(repo, "crash")
    assert prune(str(repo)).rolled_back == ("crash",)
    _assert_nothing_left(repo, "crash", "swarm/r1/crash")


def test_a_hand_edited_intent_is_rejected_not_trusted(repo: Path) -> None:
    path = Path(intent_path(str(repo), "evil"))
    path.parent.mkdir(parents=True)
    path.write_text('{"name": "evil", "path": "/", "branch": "b", "created_branch_at": null}')
    with pytest.raises(CorruptFile, match=r"evil\.intent"):
        prune(str(repo))


def test_eight_threads_create_eight_worktrees(repo: Path) -> None:
    names = [f"t{i}" for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        trees = list(pool.map(lambda n: create(str(repo), n, f"swarm/r1/{n}"), names))
    assert sorted(t.name for t in list_worktrees(str(repo))) == names
    for tree in trees:
        assert git(Path(tree.path), "symbolic-ref", "--short", "HEAD") == tree.branch
        assert (Path(tree.path) / "README").exists()


def test_eight_threads_creating_one_worktree_get_the_same_one(repo: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        trees = list(pool.map(lambda _: create(str(repo), "one", "swarm/r1/one"), range(8)))
    assert len(set(trees)) == 1
    assert len(list_worktrees(str(repo))) == 1


def test_create_outside_a_repository_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SwarmforgeError, match="not the top directory"):
        create(str(tmp_path), "t1", "swarm/r1/t1")
    assert not (tmp_path / ".worktrees").exists()


def test_create_from_a_linked_worktree_or_subdirectory_is_an_error(repo: Path) -> None:
    linked = Path(create(str(repo), "t1", "swarm/r1/t1").path)
    (repo / "sub").mkdir()
    for root in (linked, repo / "sub"):
        with pytest.raises(SwarmforgeError, match="main checkout"):
            create(str(root), "t2", "swarm/r1/t2")
    assert "swarm/r1/t2" not in _branches(repo)


# -- rescue ------------------------------------------------------------------------------


def _dirty_worktree(repo: Path, name: str = "t1") -> Path:
    for f in ("keep", "edit", "gone"):
        (repo / f).write_text(f"{f}\n")
    git(repo, "add", "keep", "edit", "gone")
    git(repo, "commit", "-q", "-m", "files")
    tree = Path(create(str(repo), name, f"swarm/r1/{name}").path)
    (tree / "edit").write_text("edited\n")
    (tree / "gone").unlink()
    (tree / "new").write_text("new\n")
    (tree / "staged").write_text("staged\n")
    git(tree, "add", "staged")
    (tree / ".swarmforge").mkdir()
    (tree / ".swarmforge" / "roles.tsv").write_text("ignored\n")
    return tree


def test_removal_rescues_the_whole_working_tree_and_touches_nothing_else(repo: Path) -> None:
    tree = _dirty_worktree(repo)
    head = git(tree, "rev-parse", "HEAD")
    before = (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"))
    removal = remove(str(repo), "t1", rescue_ref=RESCUE)
    assert removal.removed and removal.rescued == git(repo, "rev-parse", RESCUE)
    assert git(repo, "ls-tree", "-r", "--name-only", RESCUE).split() == [
        "README",
        "edit",
        "keep",
        "new",
        "staged",
    ]
    assert git(repo, "show", f"{RESCUE}:edit") == "edited"
    assert git(repo, "show", f"{RESCUE}:new") == "new"
    assert git(repo, "rev-parse", f"{RESCUE}^") == head
    assert git(repo, "log", "-1", "--format=%s", RESCUE) == (
        "swarmforge: uncommitted work of worktree t1"
    )
    assert git(repo, "rev-parse", "swarm/r1/t1") == head, "the branch stays as it was"
    assert (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD")) == before


def test_removal_of_a_clean_worktree_rescues_nothing(repo: Path) -> None:
    tree = create(str(repo), "t1", "swarm/r1/t1")
    (Path(tree.path) / ".swarmforge").mkdir()
    (Path(tree.path) / ".swarmforge" / "sequence").write_text("000001\n")  # ignored
    assert remove(str(repo), "t1", rescue_ref=RESCUE).rescued is None
    assert git(repo, "for-each-ref", "refs/swarmforge") == ""


def test_a_second_rescue_keeps_the_first_reachable(repo: Path) -> None:
    _dirty_worktree(repo)
    first = remove(str(repo), "t1", rescue_ref=RESCUE).rescued
    again = Path(create(str(repo), "t1", "swarm/r1/t1").path)
    (again / "new").write_text("newer\n")
    second = remove(str(repo), "t1", rescue_ref=RESCUE).rescued
    assert first is not None and second not in (None, first)
    assert git(repo, "rev-parse", f"{RESCUE}^2") == first


def test_removal_refuses_a_bad_rescue_ref(repo: Path) -> None:
    tree = create(str(repo), "t1", "swarm/r1/t1")
    for bad in ("heads/x", "refs/a..b", "refs/x.lock"):
        with pytest.raises(SwarmforgeError, match="rescue ref"):
            remove(str(repo), "t1", rescue_ref=bad)
    assert Path(tree.path).is_dir()


# -- remove ------------------------------------------------------------------------------


def test_remove_a_clean_worktree(repo: Path) -> None:
    tree = create(str(repo), "t1", "swarm/r1/t1")
    removal = remove(str(repo), "t1", rescue_ref=RESCUE)
    assert (removal.removed, removal.rescued, removal.mailbox) == (True, None, None)
    assert not Path(tree.path).exists()
    assert _registered(repo) == [str(repo)]
    assert "swarm/r1/t1" in _branches(repo)  # its commits are the branch's, not ours to drop
    assert git(repo, "for-each-ref", "refs/swarmforge") == ""


def test_remove_keeps_uncommitted_work_in_the_rescue_ref(repo: Path) -> None:
    tree = _dirty_worktree(repo)
    removal = remove(str(repo), "t1", rescue_ref=RESCUE)
    assert removal.removed and not tree.exists()
    assert removal.rescued == git(repo, "rev-parse", RESCUE)
    assert git(repo, "ls-tree", "-r", "--name-only", RESCUE).split() == [
        "README",
        "edit",
        "keep",
        "new",
        "staged",
    ]
    assert git(repo, "show", f"{RESCUE}:edit") == "edited"


def _mailbox(tree: Path) -> Path:
    """The worktree's mailbox as `up` makes it: in its state in the git directory, which
    the worktree's `.swarmforge` shows (statedir.py)."""
    mailbox = Path(statedir.path(str(tree), HANDOFFS))
    mailbox.mkdir(parents=True)
    stateview.ensure(str(tree))
    assert (tree / ".swarmforge").is_symlink()
    return mailbox


def test_remove_keeps_pending_mailbox_items(repo: Path) -> None:
    tree = Path(create(str(repo), "t1", "swarm/r1/t1").path)
    mailbox = _mailbox(tree)
    new = mailbox / "inbox" / "new"
    new.mkdir(parents=True)
    (mailbox / "outbox" / "tmp").mkdir(parents=True)
    (new / "50_x.handoff").write_text("pending\n")
    removal = remove(str(repo), "t1", rescue_ref=RESCUE)
    assert removal.rescued is None  # the mailbox is excluded from git, so not "work"
    kept = Path(removal.mailbox or "")
    assert kept.parent == Path(statedir.path(str(repo), ORPHANED_MAILBOXES))
    assert kept.name.startswith("t1-")
    assert (kept / "inbox" / "new" / "50_x.handoff").read_text() == "pending\n"
    assert (kept / "outbox" / "tmp").is_dir()


def test_remove_drops_a_mailbox_of_empty_directories(repo: Path) -> None:
    tree = Path(create(str(repo), "t1", "swarm/r1/t1").path)
    (tree / ".swarmforge" / "handoffs" / "inbox" / "new").mkdir(parents=True)
    assert remove(str(repo), "t1", rescue_ref=RESCUE).mailbox is None
    assert not Path(statedir.path(str(repo), ORPHANED_MAILBOXES)).exists()


def test_remove_without_a_rescue_ref_refuses_dirty_work(repo: Path) -> None:
    tree = _dirty_worktree(repo)
    new = tree / ".swarmforge" / "handoffs" / "inbox" / "new"
    new.mkdir(parents=True)
    (new / "item").write_text("x\n")
    with pytest.raises(SwarmforgeError, match="uncommitted work"):
        remove(str(repo), "t1", rescue_ref=None)
    assert (tree / "new").read_text() == "new\n"
    assert (new / "item").read_text() == "x\n"  # moved back
    orphaned = Path(statedir.path(str(repo), ORPHANED_MAILBOXES))
    assert not orphaned.exists() or not any(orphaned.iterdir())


def test_remove_of_a_missing_worktree_does_nothing(repo: Path) -> None:
    assert not remove(str(repo), "never", rescue_ref=RESCUE).removed


def test_remove_refuses_a_directory_that_is_not_a_worktree(repo: Path) -> None:
    stray = repo / ".worktrees" / "stray"
    stray.mkdir(parents=True)
    (stray / "data").write_text("mine\n")
    with pytest.raises(SwarmforgeError, match="not a worktree"):
        remove(str(repo), "stray", rescue_ref=RESCUE)
    assert (stray / "data").read_text() == "mine\n"
    assert git(repo, "for-each-ref", "refs/swarmforge") == ""


# -- prune -------------------------------------------------------------------------------


def test_prune_forgets_a_worktree_whose_directory_vanished(repo: Path) -> None:
    gone = create(str(repo), "gone", "swarm/r1/gone")
    kept = create(str(repo), "kept", "swarm/r1/kept")
    shutil.rmtree(gone.path)
    pruned = prune(str(repo))
    assert [(w.name, w.branch) for w in pruned.worktrees] == [("gone", "swarm/r1/gone")]
    assert _registered(repo) == [str(repo), kept.path]
    assert "swarm/r1/gone" in _branches(repo)
    assert prune(str(repo)).worktrees == ()
    assert create(str(repo), "gone", "swarm/r1/gone").head == gone.head


def test_create_over_a_vanished_worktree_prunes_it_first(repo: Path) -> None:
    gone = create(str(repo), "gone", "swarm/r1/gone")
    shutil.rmtree(gone.path)
    assert create(str(repo), "gone", "swarm/r1/gone") == gone
    assert remove(str(repo), "gone", rescue_ref=RESCUE).removed
    shutil.rmtree(create(str(repo), "gone", "swarm/r1/gone").path)
    assert remove(str(repo), "gone", rescue_ref=RESCUE).removed  # the stale registration
    assert _registered(repo) == [str(repo)]


# -- lock --------------------------------------------------------------------------------


def _locked_elsewhere(root: str) -> bool:
    return is_held(lock_path(root))


def test_the_lock_excludes_others_and_a_dead_holder_blocks_nobody(repo: Path) -> None:
    code = (
        "import sys; from swarmforge.git.lock import git_lock\n"
        "with git_lock(sys.argv[1]):\n    print('held', flush=True); sys.stdin.read()"
    )
    argv = [sys.executable, "-c", code, str(repo)]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        assert _locked_elsewhere(str(repo))
        holder.kill()
    assert not _locked_elsewhere(str(repo))
    with git_lock(str(repo)):
        assert _locked_elsewhere(str(repo))
    assert create(str(repo), "t1", "swarm/r1/t1").name == "t1"
