"""Reads of a git repository through pygit2, answered as plain dataclasses.

The only module of the package that imports pygit2, and only where a measurement
shows it pays (bench/gitlookup.py, medians on a shared 2-core machine): a commit
lookup takes 0.26 ms through pygit2 against 1.7 ms for a git process (0.15 x),
but importing pygit2 takes ~90 ms, earned back only after some 60 lookups in one
process. None makes that many, so commits are looked up through the git CLI
(git/objects.py). pygit2 stays where a process manages worktrees and imports it
anyway: the checkout reads (`open_checkout`) and the start of a worktree's branch
(`branch_start`, `create_branch`). There its two lookups take 0.24 ms against
3.3 ms for two git processes; bench/worktrees.py, which holds a create + remove
within bare git's time, measured the small repository's create at 0.85 x bare
`git worktree add` this way and 1.17 x with the two lookups through the CLI.
The import happens inside the functions. Every other write goes through the git CLI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmforge.errors import SwarmforgeError
from swarmforge.statedir import common_dir


@dataclass(frozen=True)
class Checkout:
    """A work tree of a repository: its main checkout or a linked worktree."""

    workdir: str  # real path, no trailing slash
    git_dir: str  # its own git dir: `.git`, or `.git/worktrees/<id>` for a linked worktree
    common_dir: str  # the git dir shared by every worktree of the repository
    head_ref: str | None  # the ref HEAD names (`refs/heads/...`), None when detached
    head: str | None  # the commit HEAD resolves to, None before the first commit

    @property
    def is_main(self) -> bool:
        """True for the repository's main checkout."""
        return self.git_dir == self.common_dir


def _open(path: str) -> Any:
    import pygit2
    from pygit2.enums import RepositoryOpenFlag

    try:
        # NO_SEARCH: `path` itself must be the top of a checkout; never a parent's repository.
        return pygit2.Repository(path, RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, OSError):
        return None


def open_checkout(path: str) -> Checkout | None:
    """The checkout whose top directory is `path`, or None when `path` is not one."""
    repo = _open(path)
    if repo is None or repo.is_bare or not repo.workdir:
        return None
    workdir = os.path.realpath(repo.workdir)
    if workdir != os.path.realpath(path):
        return None
    git_dir = os.path.realpath(repo.path)
    head_ref = None if repo.head_is_detached else str(repo.references["HEAD"].target)
    head = None if repo.head_is_unborn else str(repo.head.target)
    return Checkout(workdir, git_dir, os.path.realpath(common_dir(git_dir)), head_ref, head)


@dataclass(frozen=True)
class MainRepo:
    """A repository's main checkout: its top directory and its (common) git dir."""

    workdir: str
    common_dir: str


def find_main(path: str) -> MainRepo | None:
    """The main checkout whose top directory is `path`, or None when `path` is not one."""
    workdir = os.path.realpath(path)
    git_dir = Path(workdir, ".git")
    # The usual layout is answered by two stats; opening the repository costs ten times more
    # and this runs on every create and remove.
    if (git_dir / "HEAD").is_file() and not os.path.lexists(git_dir / "commondir"):
        return MainRepo(workdir, os.path.realpath(git_dir))
    found = open_checkout(workdir)
    if found is None or not found.is_main:
        return None
    return MainRepo(found.workdir, found.common_dir)


def _repo(root: str) -> Any:
    repo = _open(root)
    if repo is None:
        raise SwarmforgeError(f"{root} is not a git checkout.")
    return repo


def _commit_of(repository: Any, rev: str) -> str | None:
    import pygit2

    try:
        return str(repository.revparse_single(rev).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


@dataclass(frozen=True)
class BranchStart:
    """Where a worktree on a branch starts."""

    existing: str | None  # the branch's commit, None when the branch does not exist
    start: str | None  # that commit, else the commit `base` names; None if neither exists


def branch_start(root: str, branch: str, base: str) -> BranchStart:
    """Whether `branch` exists in the repository at `root`, and the commit to start from."""
    repository = _repo(root)
    existing = _commit_of(repository, f"refs/heads/{branch}")
    return BranchStart(existing, existing or _commit_of(repository, base))


def create_branch(root: str, branch: str, commit: str) -> None:
    """Create branch `branch` at `commit`; the caller holds the git lock.

    In-process rather than leaving it to `git worktree add -b`, which spawns a
    `git branch` child for it: one process fewer per worktree. libgit2 takes
    git's own ref lock file, so it is as safe as the CLI against other writers.
    """
    import pygit2

    refname = f"refs/heads/{branch}"
    try:
        _repo(root).create_reference_direct(
            refname, pygit2.Oid(hex=commit), False, message=f"branch: Created from {commit}"
        )
    except (ValueError, pygit2.GitError) as exc:
        raise SwarmforgeError(f"Cannot create branch '{branch}' in {root}: {exc}.") from None


def has_identity(path: str) -> bool:
    """True when git configuration gives a committer name and e-mail for `path`."""
    import pygit2

    try:
        _repo(path).default_signature  # noqa: B018 - the lookup is the check
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return True


def admin_dirs_for(common_dir: str, path: str) -> list[str]:
    """Git's administrative directories (`worktrees/<id>`) registered for work tree `path`."""
    target = str(Path(path, ".git"))
    try:
        admins = list(Path(common_dir, "worktrees").iterdir())
    except FileNotFoundError:
        return []
    found = []
    for admin in admins:
        try:
            recorded = (admin / "gitdir").read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
            continue
        if os.path.normpath(recorded) == target:
            found.append(str(admin))
    return found
