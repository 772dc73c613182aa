"""Finding the project root and reading roles.tsv."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarmforge import projectroot, roletable
from swarmforge.errors import CorruptFile, SwarmforgeError
from tests.support import Project


def test_root_is_found_from_the_main_checkout_a_worktree_and_below(project: Project) -> None:
    root = str(project.root)
    assert projectroot.find_root(root) == root
    assert projectroot.find_root(str(project.tree("qa"))) == root
    deep = project.tree("qa") / "a" / "b"
    deep.mkdir(parents=True)
    assert projectroot.find_root(str(deep)) == root


def test_a_worktree_with_its_own_roles_tsv_is_its_own_root(project: Project) -> None:
    tree = project.tree("qa")
    (tree / ".swarmforge").mkdir(exist_ok=True)
    (tree / ".swarmforge" / "roles.tsv").write_text("")
    assert projectroot.find_root(str(tree / ".swarmforge")) == str(tree)


def test_no_root_outside_a_project(tmp_path: Path) -> None:
    with pytest.raises(SwarmforgeError, match="Cannot find SwarmForge project root"):
        projectroot.find_root(str(tmp_path))
    (tmp_path / ".git").write_text("not a gitdir line\n")
    with pytest.raises(SwarmforgeError):
        projectroot.find_root(str(tmp_path))


def test_locate_takes_the_first_kind_found_in_the_order_asked(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    config = checkout / "sub"
    (config / "swarmforge").mkdir(parents=True)
    (config / "swarmforge" / "swarmforge.conf").write_text("")
    deep = config / "a" / "b"
    deep.mkdir(parents=True)
    at = str(deep)
    assert projectroot.locate(at) is None  # no swarm started: no roles.tsv
    assert projectroot.locate(at, (projectroot.CONFIG,)) == str(config)
    assert projectroot.locate(at, (projectroot.CHECKOUT,)) == str(checkout)
    assert projectroot.locate(at, (projectroot.CHECKOUT, projectroot.CONFIG)) == str(checkout)
    assert projectroot.locate(at, projectroot.ANYWHERE) == str(config)
    (checkout / ".swarmforge").mkdir()
    (checkout / ".swarmforge" / "roles.tsv").write_text("")
    assert projectroot.locate(at, projectroot.ANYWHERE) == str(checkout)  # the swarm, first
    outside = tmp_path / "outside"
    outside.mkdir()
    assert projectroot.locate(str(outside), projectroot.ANYWHERE) is None
    assert projectroot.locate(str(outside), (*projectroot.ANYWHERE, projectroot.HERE)) == str(
        outside
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a\tb\n", "line 1: expected 7 tab-separated columns, got 2"),
        ("a_b\tb\tc\td\te\tf\ttask\n", "line 1: role name 'a_b' may not contain"),
        ("\tb\tc\td\te\tf\ttask\n", "line 1: role name is empty"),
        ("a\tb\tc\td\te\tf\n\na\tb\tc\td\te\tf\n", "line 3: duplicate role 'a'"),
    ],
)
def test_roles_tsv_is_parsed_strictly(text: str, problem: str) -> None:
    with pytest.raises(CorruptFile) as info:
        roletable.parse_roles(text, "/p/.swarmforge/roles.tsv")
    assert str(info.value).startswith(f"/p/.swarmforge/roles.tsv, {problem}")


def test_roles_round_trip_and_default_mode() -> None:
    roles = roletable.parse_roles("qa\tqa\t/p/.worktrees/qa\tswarmforge-qa\tQa\tcodex\n", "x")
    assert roles["qa"].mode == "task"
    assert roles["qa"].row() == "qa\tqa\t/p/.worktrees/qa\tswarmforge-qa\tQa\tcodex\ttask\n"


def test_non_utf8_roles_tsv(tmp_path: Path) -> None:
    (tmp_path / ".swarmforge").mkdir()
    (tmp_path / ".swarmforge" / "roles.tsv").write_bytes(b"ok\n\xff\n")
    with pytest.raises(CorruptFile, match="line 2: not valid UTF-8"):
        roletable.read_roles(str(tmp_path))


def test_an_empty_git_directory_is_not_a_checkout(tmp_path: Path) -> None:
    # codex's sandbox leaves mount points such as /tmp/.git: git walks past them, and so
    # must the search for a project, or every directory under /tmp would be "in" /tmp.
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    assert projectroot.worktree_top(str(inner)) is None
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert projectroot.worktree_top(str(inner)) == str(tmp_path)
    (inner / ".git").write_text("gitdir: /elsewhere/.git/worktrees/inner\n")
    assert projectroot.worktree_top(str(inner)) == str(inner)
