"""Rescue of uncommitted work: the whole working-tree state as a commit on a ref.

Not `git stash`: refs/stash is one ref shared by every worktree of the
repository, and stashing rewrites the worktree. Here the state is staged into
a temporary copy of the worktree's index, so the real index and the files are
left exactly as they were, and each task's work lands on its own ref.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.git import repo
from swarmforge.git.command import git, run
from swarmforge.git.names import check_refname
from swarmforge.git.objects import lookup
from swarmforge.git.project import identity_config
from swarmforge.proc import policy


def is_dirty(workdir: str) -> bool:
    """True when the worktree has tracked changes or untracked files git does not ignore."""
    # --no-optional-locks: a plain status refreshes and rewrites the real index.
    result = run(workdir, "--no-optional-locks", "status", "--porcelain", "-z", "-unormal")
    if not result.ok:
        raise SwarmforgeError(f"Cannot read the status of worktree {workdir}.")
    return bool(result.stdout)


@contextmanager
def scratch_index(git_dir: str) -> Iterator[str]:
    """A scratch copy of the index of the checkout whose git dir is `git_dir`, removed after.

    Git reads and writes it (GIT_INDEX_FILE) in place of the real index, which, with
    the files on disk, stays exactly as it was; its lock is never taken.
    """
    fd, scratch = tempfile.mkstemp(prefix="swarmforge-scratch-", suffix=".index", dir=git_dir)
    os.close(fd)
    try:
        try:
            # A scratch file deleted below, not state, so filewrite.atomic_write is not needed.
            shutil.copyfile(Path(git_dir, "index"), scratch)
        except FileNotFoundError:
            # No index yet: git starts an empty one; an empty file is corrupt.
            Path(scratch).unlink()
        yield scratch
    finally:
        Path(scratch).unlink(missing_ok=True)
        Path(scratch + ".lock").unlink(missing_ok=True)


def _tree_of(checkout: repo.Checkout) -> str:
    """The tree of every file in the worktree, staged into a scratch copy of its index."""
    with scratch_index(checkout.git_dir) as scratch:
        env = policy.child_env({"GIT_INDEX_FILE": scratch})
        git(checkout.workdir, "add", "--all", env=env)
        return git(checkout.workdir, "write-tree", env=env).strip()


def snapshot(checkout: repo.Checkout, message: str, previous: str | None = None) -> str | None:
    """A commit of the worktree's full state on top of HEAD (and `previous`), or None if clean."""
    if not is_dirty(checkout.workdir):
        return None
    tree = _tree_of(checkout)
    args = ["commit-tree", tree, "-m", message]
    if checkout.head is not None:
        args += ["-p", checkout.head]
    if previous is not None and previous != checkout.head:
        # An earlier rescue on the same ref stays reachable as a second parent.
        args += ["-p", previous]
    return git(checkout.workdir, *args, options=identity_config(checkout.workdir)).strip()


def _point(root: str, ref: str, commit: str, previous: str | None, message: str) -> None:
    # Compare-and-swap on the value the snapshot was built on ("" = must not exist yet).
    git(root, "update-ref", "-m", message, ref, commit, previous or "")


def rescue_locked(root: str, checkout: repo.Checkout, ref: str, message: str) -> str | None:
    """Save the worktree's uncommitted work as a commit at `ref`; its id, or None when clean.

    The caller holds the git lock of `root`, the project's main checkout.
    """
    previous = lookup(root, ref).oid
    commit = snapshot(checkout, message, previous)
    if commit is not None:
        _point(root, ref, commit, previous, message)
    return commit


def check_rescue_ref(ref: str) -> str:
    """`ref` if it is a valid ref name under refs/; SwarmforgeError naming it otherwise."""
    if not ref.startswith("refs/"):
        raise SwarmforgeError(f"Invalid rescue ref {ref!r}: it must start with 'refs/'.")
    return check_refname(ref, "rescue ref")
