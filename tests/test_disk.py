"""Disk use of role worktrees in `status`, and `gc --artifacts`: real repositories and files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from swarmforge import statedir, stateview
from swarmforge.config import sessionrecord
from swarmforge.layout import HANDOFFS
from swarmforge.swarm import disk
from swarmforge.swarm.artifacts.sweep import sweep as sweep_artifacts
from tests.support import CAPTURES, Project, git, make_swarm, record_run, retry_until
from tests.support import run_cli as sf

IGNORE = "build/\n*.o\nnode_modules\n"


def ignoring(repo: Path) -> None:
    """Commit a .gitignore, and exclude swarmforge's state as `up` does."""
    (repo / ".gitignore").write_text(IGNORE)
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore build output")
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".swarmforge\n.worktrees/\n")  # `.swarmforge` is a link: no slash


def recorded(project: Project, state: str = "stopped", pids: dict[str, int] | None = None) -> None:
    """A headless run of the project's roles, as `up` records it."""
    record_run(project, state=state, pids=pids)


def stopped(repo: Path, roles: dict[str, str]) -> Project:
    """A project with a .gitignore and a stopped run of `roles`."""
    ignoring(repo)
    project = Project(repo, roles)
    recorded(project)
    return project


def build_output(tree: Path) -> None:
    """Ignored output, untracked work and a mailbox item, as a role leaves them."""
    (tree / "build" / "lib").mkdir(parents=True)
    (tree / "build" / "lib" / "out.bin").write_bytes(b"x" * 50_000)
    (tree / "src").mkdir()
    (tree / "src" / "main.o").write_bytes(b"o" * 3_000)
    (tree / "src" / "main.c").write_text("int main(void) { return 0; }\n")  # untracked work
    (tree / "notes.txt").write_text("untracked, not ignored\n")
    # The mailbox lies in the checkout's state in the git directory, which its `.swarmforge`
    # shows (statedir.py), as `up` makes them.
    inbox = Path(statedir.path(str(tree), HANDOFFS)) / "inbox" / "completed"
    inbox.mkdir(parents=True, exist_ok=True)
    stateview.ensure(str(tree))
    assert (tree / ".swarmforge").is_symlink()
    (inbox / "50_item.handoff").write_text("from: lead\n\nwork\n")


def listing(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every path under `root` (symlinks as themselves), git's index caches aside."""
    found: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if name in ("index", "index.lock"):
                continue  # `git status` may refresh its stat cache: git's own bookkeeping
            st = path.lstat()
            if path.is_symlink():
                found[str(path.relative_to(root))] = ("link", 0, str(path.readlink()).encode())
            elif path.is_dir():
                found[str(path.relative_to(root))] = ("dir", 0, b"")
            else:
                found[str(path.relative_to(root))] = ("file", st.st_mtime_ns, path.read_bytes())
    return found


def role_listing(tree: Path) -> dict[str, tuple[str, int, bytes]]:
    """A worktree's listing and its state's, which lies in the git directory."""
    state = Path(statedir.of(str(tree)))
    return {**listing(tree), **{f"<state>/{k}": v for k, v in listing(state).items()}}


# swarmforge's own, its state in the git directory (statedir.py) and its view.
SWARMFORGES = (".worktrees", ".swarmforge", f".git/{statedir.STATE_NAME}", *CAPTURES)


def users_own(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """The main checkout's listing, less swarmforge's own (above)."""
    return {k: v for k, v in listing(root).items() if not k.startswith(SWARMFORGES)}


def blocks(path: Path) -> int:
    return path.lstat().st_blocks * 512


def test_a_worktree_size_counts_files_once_and_never_what_a_symlink_points_to(
    repo: Path, tmp_path: Path
) -> None:
    project = stopped(repo, {"coder": "task"})
    tree = project.tree("coder")
    before = disk.worktree_bytes(str(tree))
    assert before is not None and before > 0
    big = tree / "big.bin"
    big.write_bytes(b"b" * 200_000)
    assert disk.worktree_bytes(str(tree)) == before + blocks(big)
    os.link(big, tree / "same.bin")
    assert disk.worktree_bytes(str(tree)) == before + blocks(big)
    elsewhere = tmp_path / "shared_modules"
    elsewhere.mkdir()
    (elsewhere / "huge.bin").write_bytes(b"h" * 500_000)
    link = tree / "node_modules"
    link.symlink_to(elsewhere)
    assert disk.worktree_bytes(str(tree)) == before + blocks(big) + blocks(link)
    assert disk.worktree_bytes(str(tmp_path / "missing")) is None


def test_status_shows_each_worktree_size_and_none_for_the_main_checkout(repo: Path) -> None:
    project = stopped(repo, {"lead": "master", "coder": "task"})
    (project.tree("coder") / "big.bin").write_bytes(b"b" * 2_000_000)
    r = sf("status", "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    roles = {role["role"]: role for role in json.loads(r.stdout)["roles"]}
    assert roles["lead"]["disk_bytes"] is None
    assert roles["coder"]["disk_bytes"] == disk.worktree_bytes(str(project.tree("coder")))
    assert roles["coder"]["disk_bytes"] >= 2_000_000
    text = sf("status", cwd=repo).stdout
    assert "disk 2.0 MB" in text.split("coder", 1)[1].splitlines()[0]


def test_gc_artifacts_dry_run_lists_the_ignored_output_and_changes_nothing(repo: Path) -> None:
    project = stopped(repo, {"coder": "task", "tests": "batch"})
    for role in ("coder", "tests"):
        build_output(project.tree(role))
    before = listing(repo)
    r = sf("gc", "--artifacts", "--dry-run", "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert listing(repo) == before
    sweep = json.loads(r.stdout)["artifacts"]
    assert sweep["dry_run"] is True
    shown = sorted((a["role"], a["path"]) for a in sweep["removed"])
    assert shown == sorted(
        (role, str(project.tree(role) / rel))
        for role in ("coder", "tests")
        for rel in ("build", "src/main.o")
    )
    assert sweep["bytes"] == sum(a["bytes"] for a in sweep["removed"]) >= 2 * 53_000
    text = sf("gc", "--artifacts", "--dry-run", cwd=repo).stdout
    assert f"would remove {project.tree('coder') / 'build'} (" in text
    assert listing(repo) == before


def test_gc_artifacts_removes_exactly_the_ignored_paths(repo: Path, tmp_path: Path) -> None:
    project = stopped(repo, {"lead": "master", "coder": "task"})
    tree = project.tree("coder")
    build_output(tree)
    build_output(repo)  # the main checkout's own output is the user's
    target = tmp_path / "outside_modules"
    target.mkdir()
    (target / "dep.js").write_text("module.exports = 1\n")
    (tree / "node_modules").symlink_to(target)
    main_before = users_own(repo)
    dry = json.loads(sf("gc", "--artifacts", "--dry-run", "--json", cwd=repo).stdout)

    r = sf("gc", "--artifacts", "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    sweep = json.loads(r.stdout)["artifacts"]
    assert sweep["dry_run"] is False
    assert sweep["removed"] == dry["artifacts"]["removed"]
    removed = {a["path"] for a in sweep["removed"]}
    assert removed == {str(tree / p) for p in ("build", "src/main.o", "node_modules")}
    assert not any(os.path.lexists(p) for p in removed)
    assert (target / "dep.js").read_text() == "module.exports = 1\n"
    for kept in ("README", ".gitignore", "notes.txt", "src/main.c"):
        assert (tree / kept).is_file(), kept
    assert (tree / ".swarmforge" / "handoffs" / "inbox" / "completed" / "50_item.handoff").is_file()
    left = git(tree, "status", "--porcelain", "--ignored").splitlines()
    assert set(left) == {"?? notes.txt", "?? src/", "!! .swarmforge"}
    assert users_own(repo) == main_before


def test_gc_artifacts_json_shape_and_dry_run_alone_is_refused(repo: Path) -> None:
    project = stopped(repo, {"coder": "task"})
    build_output(project.tree("coder"))
    report = json.loads(sf("gc", "--artifacts", "--json", cwd=repo).stdout)
    sweep = report["artifacts"]
    assert set(sweep) == {"dry_run", "removed", "skipped", "failed", "bytes"}
    assert set(sweep["removed"][0]) == {"role", "path", "bytes"}
    assert sweep["skipped"] == [] and sweep["failed"] == []
    assert "artifacts" not in json.loads(sf("gc", "--json", cwd=repo).stdout)
    again = sf("gc", "--artifacts", cwd=repo).stdout
    assert "removed 0 ignored path(s), 0 B" in again
    refused = sf("gc", "--dry-run", cwd=repo)
    assert refused.returncode != 0 and "--artifacts" in refused.stderr


def test_gc_artifacts_leaves_a_worktree_a_process_still_works_in(repo: Path) -> None:
    project = stopped(repo, {"coder": "task", "tests": "task"})
    for role in ("coder", "tests"):
        build_output(project.tree(role))
    # A build started by hand in tests' worktree, after its role stopped.
    builder = subprocess.Popen(["sleep", "30"], cwd=project.tree("tests"))
    try:
        sweep = sweep_artifacts(str(repo))
    finally:
        builder.kill()
        builder.wait()
    assert (project.tree("tests") / "build" / "lib" / "out.bin").is_file()
    assert [(s.role, s.reason) for s in sweep.skipped] == [
        ("tests", f"process {builder.pid} (sleep) works there")
    ]
    assert not (project.tree("coder") / "build").exists()


def test_the_sweep_leaves_a_role_whose_process_is_alive(repo: Path, tmp_path: Path) -> None:
    ignoring(repo)
    project = Project(repo, {"coder": "task", "tests": "task"})
    for role in ("coder", "tests"):
        build_output(project.tree(role))
    role_process = subprocess.Popen(["sleep", "30"], cwd=tmp_path)
    try:
        recorded(project, "running", pids={"coder": role_process.pid})
        before = role_listing(project.tree("coder"))
        sweep = sweep_artifacts(str(repo))
        assert role_listing(project.tree("coder")) == before
    finally:
        role_process.kill()
        role_process.wait()
    assert [(s.role, s.reason) for s in sweep.skipped] == [("coder", "the role is running")]
    assert {a.role for a in sweep.removed} == {"tests"}


@pytest.mark.slow
def test_gc_artifacts_leaves_a_running_role_alone_until_it_stops(repo: Path) -> None:
    ignoring(repo)
    make_swarm(repo, "window worker exec worker task sh -c 'cat; sleep 30'\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        tree = Path(record.roles[0].path)
        retry_until(lambda: tree.is_dir())
        build_output(tree)
        before = role_listing(tree)
        report = json.loads(sf("gc", "--artifacts", "--json", cwd=repo).stdout)
        assert report["live"] is True
        assert report["artifacts"]["removed"] == []
        assert report["artifacts"]["skipped"] == [
            {"role": "worker", "path": str(tree), "reason": "the role is running"}
        ]
        assert role_listing(tree) == before
    finally:
        assert sf("down", cwd=repo).returncode == 0
    report = json.loads(sf("gc", "--artifacts", "--json", cwd=repo).stdout)
    assert {a["path"] for a in report["artifacts"]["removed"]} == {
        str(tree / "build"),
        str(tree / "src" / "main.o"),
    }
