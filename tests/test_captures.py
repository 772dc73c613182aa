"""Captures of a role's work, and `swarmforge recover`: real git, real files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from swarmforge import statedir
from swarmforge.config import sessionrecord
from swarmforge.errors import SwarmforgeError
from swarmforge.git import captures, guard
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.layout import NESTED_KEPT
from tests.support import Project, git, kick, make_swarm, retry_until
from tests.support import run_cli as sf


def state(tree: Path) -> tuple[str, str, str, str]:
    """What a capture must never change: the index, the status, every ref but captures,
    and HEAD."""
    index = hashlib.sha256(
        (Path(git(tree, "rev-parse", "--absolute-git-dir")) / "index").read_bytes()
    )
    listed = git(tree, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    refs = "\n".join(line for line in listed if not line.startswith("refs/swarmforge/"))
    status = git(tree, "status", "--porcelain=v2", "--untracked-files=all", "--ignored")
    return index.hexdigest(), status, refs, git(tree, "rev-parse", "HEAD")


def work_in_progress(repo: Path) -> None:
    """Staged, unstaged, untracked, deleted and ignored files, as an agent leaves them."""
    (repo / "tracked.txt").write_text("one\n")
    (repo / "gone.txt").write_text("gone\n")
    (repo / ".gitignore").write_text("build/\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "tracked.txt").write_text("staged\n")
    git(repo, "add", "tracked.txt")
    (repo / "tracked.txt").write_text("staged\nthen edited\n")
    (repo / "new.txt").write_text("untracked\n")
    (repo / "gone.txt").unlink()
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"ignored")


def test_a_capture_holds_head_index_and_files_and_changes_nothing(repo: Path) -> None:
    committed = set(git(repo, "ls-files").splitlines())
    work_in_progress(repo)
    before = state(repo)
    made = captures.take(str(repo), "coder", "test")
    assert made is not None and state(repo) == before
    assert made.head == before[3] and made.branch == git(repo, "symbolic-ref", "HEAD")
    files = git(repo, "ls-tree", "-r", "--name-only", made.commit).splitlines()
    # Nothing ignored, nothing deleted.
    assert set(files) == committed | {".gitignore", "new.txt", "tracked.txt"}
    assert git(repo, "show", f"{made.commit}:tracked.txt") == "staged\nthen edited"
    assert git(repo, "show", f"{made.commit}^2:tracked.txt") == "staged"  # the index
    assert git(repo, "rev-parse", f"{made.commit}^1") == made.head
    # The same state again is not captured twice; a change is.
    assert captures.take(str(repo), "coder", "again") is None
    (repo / "new.txt").write_text("changed\n")
    again = captures.take(str(repo), "coder", "later")
    assert again is not None and again.name > made.name
    assert [c.trigger for c in captures.listed(str(repo), "coder")] == ["test", "later"]


def test_a_capture_of_a_detached_head_keeps_its_commits(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    (repo / "lost.txt").write_text("a commit on no branch\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "detached work")
    made = captures.take(str(repo), "coder", "test")
    assert made is not None and made.branch == ""
    assert git(repo, "log", "-1", "--format=%s", made.head or "") == "detached work"
    git(repo, "checkout", "-q", "-")  # the commit is now on no branch: the capture keeps it
    git(repo, "gc", "-q", "--prune=now")
    assert git(repo, "cat-file", "-t", made.head or "") == "commit"


def test_recover_lists_and_restores_a_capture_exactly_and_touches_nothing(repo: Path) -> None:
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".worktrees/\n")  # as `up` has it
    work_in_progress(repo)
    made = captures.take(str(repo), "coder", "git reset --hard")
    assert made is not None
    wanted = git(repo, "status", "--porcelain")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")  # the work is gone from the checkout

    listing = json.loads(sf("recover", "--json", cwd=repo).stdout)["captures"]
    assert [(c["role"], c["capture"], c["trigger"]) for c in listing] == [
        ("coder", made.name, "git reset --hard")
    ]
    assert sorted(listing[0]["files"]) == ["gone.txt", "new.txt", "tracked.txt"]
    text = sf("recover", "coder", cwd=repo).stdout
    assert made.name in text and "git reset --hard" in text and "3 file(s)" in text

    before = state(repo)
    r = sf("recover", "coder", made.name[:12], cwd=repo)
    assert r.returncode == 0, r.stderr
    path = repo / ".worktrees" / f"recovered-coder-{made.name}"
    assert f"recovered/coder/{made.name}" in r.stdout and str(path) in r.stdout
    assert git(path, "status", "--porcelain") == wanted
    assert (path / "tracked.txt").read_text() == "staged\nthen edited\n"
    after = state(repo)
    theirs = [line for line in after[1].splitlines() if ".worktrees/" not in line]
    assert (after[0], theirs, after[3]) == (before[0], before[1].splitlines(), before[3])
    # Twice is refused, naming where it went; nothing exists is touched.
    again = sf("recover", "coder", made.name, cwd=repo)
    assert again.returncode != 0 and str(path) in again.stderr and "Traceback" not in again.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["recover", "coder", "2099"], "matches none of role 'coder'"),
        (["recover", "nobody", "x"], "No captures of role 'nobody'"),
        (["recover", "a..b"], "Invalid capture ref"),
    ],
)
def test_recover_refuses_what_is_not_there_in_one_line(
    repo: Path, args: list[str], said: str
) -> None:
    (repo / "f.txt").write_text("x\n")
    assert captures.take(str(repo), "coder", "test") is not None
    r = sf(*args, cwd=repo)
    assert r.returncode != 0 and said in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_pruning_keeps_the_newest_of_each_role_and_drops_by_count_and_age(repo: Path) -> None:
    names = {}
    for role in ("coder", "tester"):
        names[role] = []
        for i in range(3):
            (repo / f"{role}.txt").write_text(f"{i}\n")
            made = captures.take(str(repo), role, "test")
            assert made is not None
            names[role].append(made.name)
    gone = captures.prune(str(repo), keep=2, max_age=3600)
    assert sorted(c.name for c in gone) == sorted([names["coder"][0], names["tester"][0]])
    # Everything is older than a moment in the future: only each role's newest stays.
    captures.prune(str(repo), keep=2, max_age=1, now=captures.listed(str(repo))[-1].seconds + 60)
    left = {(c.role, c.name) for c in captures.listed(str(repo))}
    assert left == {("coder", names["coder"][2]), ("tester", names["tester"][2])}


def test_a_role_name_that_cannot_be_a_ref_is_refused(repo: Path) -> None:
    with pytest.raises(SwarmforgeError, match="Invalid capture ref"):
        captures.take(str(repo), "a..b", "test")


WRECK = """#!/bin/sh
# Exec role: what an agent's tools might run in its checkout, through the role's PATH.
echo precious > work.txt
echo staged > staged.txt && git add staged.txt
git reset -q --hard
git clean -qfdx
other=$(git for-each-ref --format='%(refname:short)' 'refs/heads/swarm/*/keeper')
git branch -D "$other" 2> refused.txt
echo "exit $?" >> refused.txt
"""


def test_the_git_on_a_roles_path_captures_before_it_destroys_and_guards_other_roles(
    repo: Path,
) -> None:
    make_swarm(
        repo,
        "window wrecker exec wrecker task ./wreck.sh\nwindow keeper exec keeper task cat\n",
        {"wreck.sh": WRECK},
    )
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        kick(record, "wrecker", "keeper")
        tree = Path(record.role("wrecker").path)  # type: ignore[union-attr]
        done = tree / "refused.txt"
        retry_until(lambda: done.is_file() and "exit" in done.read_text(), timeout=30)
        made = {c.trigger: c for c in captures.listed(str(repo), "wrecker")}
        # Before the reset: both files; before the clean: the untracked one the reset left.
        reset = made["git reset -q --hard"]
        assert git(repo, "show", f"{reset.commit}:work.txt") == "precious"
        assert git(repo, "show", f"{reset.commit}^2:staged.txt") == "staged"
        assert git(repo, "show", f"{made['git clean -qfdx'].commit}:work.txt") == "precious"
        assert not (tree / "work.txt").exists()  # the agent's commands did run
        # The other role's branch is refused, and kept.
        refused = (tree / "refused.txt").read_text()
        assert "is not this role's branch" in refused and "exit 0" not in refused
        keeper = record.role("keeper")
        assert keeper is not None and git(repo, "rev-parse", "--verify", keeper.branch)
        # Its `clean -fdx` took only the view: the item it was working on is completed.
        box = Mailbox(str(tree))
        retry_until(lambda: len(box.received(Box.COMPLETED)) == 1, timeout=30)
        retry_until(lambda: (tree / ".swarmforge").is_symlink(), timeout=5)
    finally:
        assert sf("down", cwd=repo).returncode == 0


@pytest.mark.parametrize(
    ("args", "captured"),
    [
        (["-C", "x", "reset", "--hard"], True),
        (["-c", "a=b", "clean", "-fdx"], True),
        (["clean", "-nd"], False),
        (["clean", "--dry-run", "-d"], False),
        (["stash"], True),
        (["stash", "push", "-u"], True),
        (["stash", "list"], False),
        (["stash", "show", "-p"], False),
        (["checkout", "--", "."], True),
        (["branch"], False),
        (["branch", "-a"], False),
        (["branch", "new-work"], False),
        (["branch", "-D", "old"], True),
        (["branch", "--delete", "old"], True),
        (["worktree", "list"], False),
        (["worktree", "remove", "--force", "x"], True),
        (["status"], False),
        (["--git-dir", "reset", "status"], False),  # `reset` is the option's value here
    ],
)
def test_the_guard_captures_before_exactly_the_commands_that_can_destroy(
    args: list[str], captured: bool
) -> None:
    _, verb, rest = guard.split(args)
    assert (verb in guard.GUARDED and guard.destroys(verb, rest)) is captured


def test_the_guard_refuses_another_roles_worktree_or_branch(tmp_path: Path) -> None:
    top = str(tmp_path / "mine")
    mine = "swarm/r1/coder"
    assert guard.aimed_elsewhere(top, top, mine, "worktree", ["remove", "."]) is None
    why = guard.aimed_elsewhere(top, top, mine, "worktree", ["remove", "../theirs"])
    assert why is not None and "is not this role's worktree" in why
    assert guard.aimed_elsewhere(top, top, mine, "branch", ["-D", "swarm/r1/coder"]) is None
    assert guard.aimed_elsewhere(top, top, mine, "branch", ["-D", "topic"]) is None
    why = guard.aimed_elsewhere(top, top, mine, "branch", ["-f", "swarm/r1/qa", "HEAD"])
    assert why is not None and "swarm/r1/qa is not this role's branch" in why


def nested_repository(where: Path) -> str:
    """A repository of its own at `where`, with one commit; that commit's id."""
    where.mkdir(parents=True)
    git(where, "init", "-q")
    (where / "lib.c").write_text("int lib;\n")
    git(where, "add", ".")
    git(where, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "vendored")
    return git(where, "rev-parse", "HEAD")


def test_down_purge_keeps_nested_repositories_and_commits_on_a_detached_head(
    repo: Path,
) -> None:
    make_swarm(repo, "window keeper exec keeper task cat\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    record = sessionrecord.load(str(repo))
    assert record is not None
    tree = Path(record.role("keeper").path)  # type: ignore[union-attr]
    vendored = nested_repository(tree / "vendor" / "lib")
    git(tree, "checkout", "-q", "--detach")
    (tree / "detached.txt").write_text("committed on no branch\n")
    git(tree, "add", "detached.txt")
    git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "detached")
    detached = git(tree, "rev-parse", "HEAD")
    said = sf("status", cwd=repo).stdout
    assert f"HEAD is not on swarm/{record.run_id}/keeper: detached at {detached[:10]}" in said
    state = json.loads(sf("status", "--json", cwd=repo).stdout)
    assert state["roles"][0]["off_branch"] == f"detached at {detached[:10]}"

    r = sf("down", "--purge", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert not tree.exists()
    [kept] = Path(statedir.path(str(repo), NESTED_KEPT)).glob("keeper-*/vendor/lib")
    assert f"kept the repository vendor/lib of worktree keeper at {kept}" in r.stderr
    assert git(kept, "rev-parse", "HEAD") == vendored and (kept / "lib.c").is_file()
    # The commit made on a detached HEAD is kept by the capture `down` took first.
    git(repo, "gc", "-q", "--prune=now")
    assert git(repo, "log", "-1", "--format=%s", detached) == "detached"
    assert any(c.head == detached for c in captures.listed(str(repo), "keeper"))


def test_gc_artifacts_leaves_an_ignored_directory_holding_a_repository_at_any_depth(
    repo: Path,
) -> None:
    (repo / ".gitignore").write_text("vendor/\nbuild/\n")
    make_swarm(repo, "window keeper exec keeper task cat\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    record = sessionrecord.load(str(repo))
    assert record is not None and sf("down", cwd=repo).returncode == 0
    tree = Path(record.role("keeper").path)  # type: ignore[union-attr]
    vendored = nested_repository(tree / "vendor" / "deep" / "lib")
    (tree / "build").mkdir()
    (tree / "build" / "out.o").write_text("o")
    r = sf("gc", "--artifacts", "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    sweep = json.loads(r.stdout)["artifacts"]
    assert [a["path"] for a in sweep["removed"]] == [str(tree / "build")]
    [skipped] = sweep["skipped"]
    assert skipped["path"] == str(tree / "vendor") and "deep/lib" in skipped["reason"]
    assert git(tree / "vendor" / "deep" / "lib", "rev-parse", "HEAD") == vendored


def test_mail_for_a_removed_worktree_is_held_and_up_makes_the_worktree_again(
    repo: Path,
) -> None:
    make_swarm(repo, "window keeper exec keeper task cat\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        tree = Path(record.role("keeper").path)  # type: ignore[union-attr]
        # Removed while nothing of the role runs (its own loop would make its mailbox
        # again while git deletes it, and git's removal then fails), as a person might.
        assert sf("down", cwd=repo).returncode == 0
        git(repo, "worktree", "remove", "--force", str(tree))
        assert sf("daemon", "start", cwd=repo).returncode == 0
        assert sf("send", "keeper", "are you there?", cwd=repo).returncode == 0
        retry_until(lambda: "WORKTREE_GONE" in (repo / ".swarmforge" / "events.jsonl").read_text())
        assert not tree.exists()  # never made again as a plain directory by the mail
        assert sf("daemon", "stop", cwd=repo).returncode == 0
        r = sf("up", "--backend", "headless", cwd=repo)
        assert r.returncode == 0, r.stderr
        assert git(tree, "rev-parse", "--show-toplevel") == str(tree)  # a worktree again
        box = tree / ".swarmforge" / "handoffs" / "inbox"
        retry_until(lambda: any(box.rglob("*_to_keeper.handoff")), timeout=20)
    finally:
        sf("down", cwd=repo)


def test_gc_and_repair_say_which_roles_work_they_could_not_capture(project: Project) -> None:
    tree = project.tree("coder")
    (tree / ".git").write_text("gitdir: /nonexistent/worktree\n")  # no git can read it
    for command in (["gc"], ["repair"]):
        r = sf(*command, cwd=project.root)
        assert r.returncode == 0, r.stderr
        [warning] = [line for line in r.stdout.splitlines() if line.startswith("warning: ")]
        assert warning.startswith("warning: capture of coder failed: "), r.stdout
        said = json.loads(sf(*command, "--json", cwd=project.root).stdout)
        [failed] = said["captures_failed"]
        assert failed.startswith("capture of coder failed: ")


@pytest.mark.parametrize(
    ("rest", "kept"),
    [
        (["-a"], True),
        (["push", "--all", "-m", "wip"], True),
        (["-m", "wip", "-qa"], True),
        (["push", "-a", "--", "src"], True),
        (["-u"], False),
        ([], False),
        (["pop"], False),
        (["save", "-a"], False),  # takes no pathspec
    ],
)
def test_a_stash_of_ignored_files_leaves_the_view_of_swarm_state(
    rest: list[str], kept: bool
) -> None:
    assert guard.stashes_ignored(rest) is kept
