"""Looking a commit up (swarmforge/git/objects.py), on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmforge.git import mergecheck
from swarmforge.git.command import GitFailed
from swarmforge.git.command import git as run_git
from swarmforge.git.objects import lookup
from tests.support import git


def test_a_revision_is_read_as_git_reads_it(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "-a", "-m", "release", "v1")
    for name in ("HEAD", "main", "refs/heads/main", "v1", "v1~0", head[:7]):
        assert lookup(str(repo), name).commit == head, name
    tag = lookup(str(repo), "v1")
    assert (tag.kind, tag.oid) == ("tag", git(repo, "rev-parse", "v1"))
    assert lookup(str(repo), "HEAD").kind == "commit"


@pytest.mark.parametrize("name", ["nothing-here", "", "HEAD\nmain", "HEAD:README"])
def test_a_name_that_names_no_commit_finds_none(repo: Path, name: str) -> None:
    assert lookup(str(repo), name).commit is None


def test_an_unborn_head_names_no_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    found = lookup(str(tmp_path), "HEAD")
    assert (found.oid, found.commit, found.matches) == (None, None, 0)


def test_no_repository_is_an_error_not_a_missing_commit(tmp_path: Path) -> None:
    with pytest.raises(GitFailed, match="cat-file"):
        lookup(str(tmp_path / "absent"), "HEAD")


def test_an_abbreviation_is_an_object_never_a_ref_spelt_like_it(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    # A branch named like the tree's abbreviation, at the commit.
    git(repo, "branch", tree[:10])
    assert lookup(str(repo), tree[:10]).commit == head  # as a revision: the branch
    found = lookup(str(repo), tree[:10].upper(), abbreviation=True)
    assert (found.oid, found.kind, found.commit, found.matches) == (tree, "tree", None, 1)


def test_an_abbreviated_tag_is_a_tag_that_peels_to_its_commit(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "-a", "-m", "release", "v1")
    tag = git(repo, "rev-parse", "v1")
    found = lookup(str(repo), tag[:10], abbreviation=True)
    assert (found.kind, found.commit) == ("tag", head)
    assert mergecheck.resolve(str(repo), tag[:10]) == head


def test_an_ambiguous_abbreviation_counts_its_objects(repo: Path) -> None:
    # Two blobs whose ids share their first ten hex digits (as in test_gate.py).
    for n in (323371, 1225837):
        run_git(str(repo), "hash-object", "-w", "--stdin", input=b"swarmforge ambiguity %d\n" % n)
    found = lookup(str(repo), "74763450ff", abbreviation=True)
    assert (found.oid, found.commit, found.matches) == (None, None, 2)
