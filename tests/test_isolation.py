"""Isolation of a task: its own worktree, branch and port, removed however the block ends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarmforge.errors import SwarmforgeError
from swarmforge.git.isolation import IsolationUnavailable, isolated, worktree_name
from swarmforge.ports import port_for
from tests.support import git

RESCUE = "refs/swarmforge/rescue/r1/t1"


def test_the_block_runs_in_its_own_worktree_which_goes_afterwards(repo: Path) -> None:
    with isolated(str(repo), "r1", "t1") as iso:
        assert iso.path == str(repo / ".worktrees" / "r1-t1")
        assert iso.branch == "swarm/r1/t1"
        assert iso.port == port_for("swarm/r1/t1", os.path.realpath(repo))
        assert git(Path(iso.path), "symbolic-ref", "--short", "HEAD") == iso.branch
        (Path(iso.path) / "work").write_text("done\n")
        git(Path(iso.path), "add", "work")
        git(Path(iso.path), "commit", "-q", "-m", "work")
    assert not Path(iso.path).exists()
    assert iso.removal is not None and iso.removal.removed and iso.removal.rescued is None
    assert git(repo, "show", "swarm/r1/t1:work") == "done"  # committed work stays on the branch
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_an_exception_removes_the_worktree_and_rescues_its_work(repo: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"), isolated(str(repo), "r1", "t1") as iso:
        (Path(iso.path) / "half-done").write_text("wip\n")
        raise RuntimeError("boom")
    assert not Path(iso.path).exists()
    assert git(repo, "show", f"{RESCUE}:half-done") == "wip"


def test_keyboard_interrupt_removes_the_worktree_and_rescues_its_work(repo: Path) -> None:
    with pytest.raises(KeyboardInterrupt), isolated(str(repo), "r1", "t1") as iso:
        (Path(iso.path) / "README").write_text("changed\n")
        raise KeyboardInterrupt
    assert not Path(iso.path).exists()
    assert iso.removal is not None and iso.removal.rescued == git(repo, "rev-parse", RESCUE)
    assert git(repo, "show", f"{RESCUE}:README") == "changed"


def test_a_run_may_pass_the_port_it_assigned(repo: Path) -> None:
    with isolated(str(repo), "r1", "t1", port=4321) as iso:
        assert iso.port == 4321


def test_the_same_task_in_two_runs_gets_two_worktrees(repo: Path) -> None:
    with isolated(str(repo), "r1", "t1") as one, isolated(str(repo), "r2", "t1") as two:
        assert one.path != two.path
        assert Path(one.path).is_dir() and Path(two.path).is_dir()
    assert worktree_name("r2", "t1") == "r2-t1"


def _never_runs(root: Path, marker: Path) -> None:
    with pytest.raises(IsolationUnavailable) as info, isolated(str(root), "r1", "t1"):
        marker.write_text("ran in the shared checkout\n")
    assert not marker.exists()
    assert isinstance(info.value, SwarmforgeError) and info.value.exit_code != 0
    assert "'t1'" in info.value.message and str(root) in info.value.message
    assert not (root / ".worktrees").exists()


def test_outside_a_repository_isolation_fails_closed(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    _never_runs(plain, tmp_path / "marker")
    assert not (plain / ".swarmforge").exists()


def test_a_repository_without_a_commit_fails_closed(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    _never_runs(empty, tmp_path / "marker")


def test_a_subdirectory_of_a_repository_fails_closed(repo: Path, tmp_path: Path) -> None:
    sub = repo / "sub"
    sub.mkdir()
    _never_runs(sub, tmp_path / "marker")


def test_a_linked_worktree_fails_closed(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    _never_runs(tmp_path / "side", tmp_path / "marker")


def test_a_missing_directory_fails_closed(tmp_path: Path) -> None:
    _never_runs(tmp_path / "missing", tmp_path / "marker")


def test_a_bad_task_id_is_refused_before_anything_runs(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    with pytest.raises(SwarmforgeError, match="task id 'a b'"), isolated(str(repo), "r1", "a b"):
        marker.write_text("ran\n")
    assert not marker.exists()
    assert not (repo / ".worktrees").exists()
