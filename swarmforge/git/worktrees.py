"""Worktrees at `<root>/.worktrees/<name>`: create and list them.

Every git write happens under the project's git lock (`lock.git_lock`);
lookups take none. Checkouts are made by the git CLI, which is faster than
libgit2 on big trees and runs hooks, filters and sparse checkout.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.git import intents, leftovers, repo
from swarmforge.git.command import git
from swarmforge.git.lock import git_lock
from swarmforge.git.names import check_component, check_refname, component_problem
from swarmforge.git.project import ensure_excludes_locked, find_project
from swarmforge.layout import WORKTREES_DIR


@dataclass(frozen=True)
class Worktree:
    """A worktree: its name under .worktrees/, where it is, its branch and commit."""

    name: str
    path: str
    branch: str | None  # None when its HEAD is detached
    head: str | None  # None before its branch has a commit


def worktree_path(root: str, name: str) -> str:
    """Where worktree `name` of the project at `root` lives."""
    return str(Path(root, WORKTREES_DIR, name))


def _healthy(main: repo.MainRepo, name: str, path: str, branch: str) -> Worktree | None:
    found = repo.open_checkout(path)
    if found is None or found.is_main or found.common_dir != main.common_dir:
        return None
    if found.head_ref != f"refs/heads/{branch}":
        return None
    return Worktree(name, found.workdir, branch, found.head)


def create(root: str, name: str, branch: str, base: str = "HEAD") -> Worktree:
    """Check out `branch` (made from `base` if it does not exist) at `<root>/.worktrees/<name>`.

    Idempotent: a healthy worktree of that name on that branch is returned as
    it is. Transactional: on failure, whatever this call made is removed.
    What an interrupted creation left at the path is cleared first; anything
    there that may be someone's work is refused, never removed.
    """
    check_component(name, "worktree name")
    check_refname(branch, "branch name")
    main = find_project(root)
    path = worktree_path(main.workdir, name)
    # The path is looked at before the intent record, which a creation writes
    # before it makes the path and removes only once the worktree is complete.
    if os.path.lexists(path) and not os.path.lexists(intents.intent_path(main.workdir, name)):
        found = _healthy(main, name, path, branch)
        if found is not None:
            return found
    with git_lock(main.workdir):
        recover_locked(main)
        ensure_excludes_locked(main.common_dir)
        if os.path.lexists(path):
            found = _healthy(main, name, path, branch)
            if found is not None:
                return found
            checkout = repo.open_checkout(path)
            if checkout is not None:
                raise _taken(main, name, branch, checkout)
            leftovers.refuse_unless_leftover(main, "create", name, path, (branch, base))
            leftovers.discard_locked(main, path)
        return _add_locked(main, name, path, branch, base)


def recover_locked(main: repo.MainRepo) -> list[str]:
    """Roll back the creations that died half-way (see `intents`); their names."""
    for intent in intents.leftovers(main.workdir):
        parts = intent.branch.split("/")
        if intent.created_branch_at is None or any(component_problem(p) for p in parts):
            continue
        # `repo.create_branch` runs in-process: a creation killed inside it leaves git's
        # lock file of the new ref, which would stop the rollback and every later creation.
        lock = Path(main.common_dir, "refs", "heads", f"{intent.branch}.lock")
        if os.path.lexists(lock):
            lock.unlink()
    return intents.recover_locked(main.workdir, main.common_dir)


def _taken(main: repo.MainRepo, name: str, branch: str, found: repo.Checkout) -> SwarmforgeError:
    """The refusal to create worktree `name` where the checkout `found` already is."""
    if found.is_main or found.common_dir != main.common_dir:
        return SwarmforgeError(
            f"Cannot create worktree {name!r}: {found.workdir} is a checkout of another "
            "repository.",
            hint="Move it elsewhere, or choose another name.",
        )
    # A whole worktree, maybe a running task's: a name two callers share is refused.
    on = "a detached HEAD"
    if found.head_ref is not None:
        on = f"branch {found.head_ref.removeprefix('refs/heads/')!r}"
    return SwarmforgeError(
        f"Cannot create worktree {name!r} on branch {branch!r}: {found.workdir} is a "
        f"worktree on {on}.",
        hint=f"If it holds nothing you need: git worktree remove {shlex.quote(found.workdir)}",
    )


def _add_locked(main: repo.MainRepo, name: str, path: str, branch: str, base: str) -> Worktree:
    root = main.workdir
    begin = repo.branch_start(root, branch, base)
    if begin.start is None:
        raise SwarmforgeError(f"Base {base!r} does not name a commit in {root}.")
    # A registration whose directory vanished makes git refuse the path and
    # keeps counting the branch as checked out.
    leftovers.forget_locked(main, path)
    made_branch = begin.existing is None
    intent = intents.Intent(name, path, branch, begin.start if made_branch else None)
    intents.record(root, intent)
    try:
        if made_branch:
            repo.create_branch(root, branch, begin.start)
        git(root, "worktree", "add", "--quiet", path, branch)
    except BaseException:
        intents.roll_back(root, main.common_dir, intent)
        raise
    intents.clear(root, name)
    return Worktree(name, path, branch, begin.start)


def porcelain(root: str) -> list[tuple[Worktree, bool]]:
    """Every registered worktree with its prunable flag, from `git worktree list --porcelain`."""
    records: list[dict[str, str]] = [{}]
    # Lines, not `-z`, which needs git 2.36; only a path holding a newline (none of
    # ours: names are checked) could be misread, and it would then not be listed.
    for field in git(root, "worktree", "list", "--porcelain").split("\n"):
        if field:
            key, _, value = field.partition(" ")
            records[-1][key] = value
        elif records[-1]:
            records.append({})
    found = []
    for rec in records:
        if "worktree" not in rec:
            continue
        branch = rec.get("branch")
        if branch is not None:
            branch = branch.removeprefix("refs/heads/")
        path = rec["worktree"]
        tree = Worktree(Path(path).name, path, branch, rec.get("HEAD"))
        found.append((tree, "prunable" in rec))
    return found


def list_worktrees(root: str) -> list[Worktree]:
    """The worktrees registered under `<root>/.worktrees/`."""
    main = find_project(root)
    parent = Path(main.workdir, WORKTREES_DIR)
    return [wt for wt, _ in porcelain(main.workdir) if Path(wt.path).parent == parent]
