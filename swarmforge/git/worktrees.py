"""Worktrees at `<root>/.worktrees/<name>`: create, list, remove and prune them.

Every git write happens under the project's git lock (`lock.git_lock`);
lookups take none. Checkouts are made by the git CLI, which is faster than
libgit2 on big trees and runs hooks, filters and sparse checkout.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from swarmforge.errors import SwarmforgeError
from swarmforge.git import intents, repo
from swarmforge.git.command import git, run
from swarmforge.git.lock import git_lock
from swarmforge.git.names import check_component, check_refname
from swarmforge.git.orphans import keep_mailbox, restore_mailbox
from swarmforge.git.project import WORKTREES_DIR, ensure_excludes_locked, find_project
from swarmforge.git.rescue import check_rescue_ref, is_dirty, rescue_locked


@dataclass(frozen=True)
class Worktree:
    """A worktree: its name under .worktrees/, where it is, its branch and commit."""

    name: str
    path: str
    branch: str | None  # None when its HEAD is detached
    head: str | None  # None before its branch has a commit


@dataclass(frozen=True)
class Removal:
    """What `remove` did: whether a worktree went, and what of its state was kept where."""

    name: str
    path: str
    removed: bool
    rescued: str | None  # the commit holding its uncommitted work, None if there was none
    mailbox: str | None  # where its pending mailbox items were moved, None if none


@dataclass(frozen=True)
class Pruned:
    """What `prune` cleared: stale registrations, and creations rolled back after a crash."""

    worktrees: tuple[Worktree, ...]
    rolled_back: tuple[str, ...]


def worktree_path(root: str, name: str) -> str:
    """Where worktree `name` of the project at `root` lives."""
    return os.path.join(root, WORKTREES_DIR, name)


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
        intents.recover_locked(main.workdir, main.common_dir)
        ensure_excludes_locked(main.common_dir)
        if not os.path.lexists(path):
            return _add_locked(main, name, path, branch, base)
        found = _healthy(main, name, path, branch)
    if found is None:
        raise SwarmforgeError(
            f"Cannot create worktree {name!r}: {path} exists but is not a worktree of "
            f"{main.workdir} on branch {branch!r}.",
            hint="Remove that directory, or choose another name.",
        )
    return found


def _add_locked(main: repo.MainRepo, name: str, path: str, branch: str, base: str) -> Worktree:
    root = main.workdir
    begin = repo.branch_start(root, branch, base)
    if begin.start is None:
        raise SwarmforgeError(f"Base {base!r} does not name a commit in {root}.")
    if repo.admin_dirs_for(main.common_dir, path):
        # A registration whose directory vanished makes git refuse the path and
        # keeps counting the branch as checked out.
        git(root, "worktree", "prune")
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


def _porcelain(root: str) -> list[tuple[Worktree, bool]]:
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
        tree = Worktree(os.path.basename(path), path, branch, rec.get("HEAD"))
        found.append((tree, "prunable" in rec))
    return found


def list_worktrees(root: str) -> list[Worktree]:
    """The worktrees registered under `<root>/.worktrees/`."""
    main = find_project(root)
    parent = os.path.join(main.workdir, WORKTREES_DIR)
    return [wt for wt, _ in _porcelain(main.workdir) if os.path.dirname(wt.path) == parent]


def remove(root: str, name: str, *, rescue_ref: str | None) -> Removal:
    """Remove worktree `name`, first saving its uncommitted work at `rescue_ref`.

    Its pending mailbox items are moved to `.swarmforge/orphaned-mailboxes/`.
    With `rescue_ref=None`, a worktree with uncommitted work is refused.
    """
    check_component(name, "worktree name")
    if rescue_ref is not None:
        check_rescue_ref(rescue_ref)
    main = find_project(root)
    path = worktree_path(main.workdir, name)
    with git_lock(main.workdir):
        if not os.path.lexists(path):
            stale = bool(repo.admin_dirs_for(main.common_dir, path))
            if stale:
                git(main.workdir, "worktree", "prune")
            return Removal(name, path, stale, None, None)
        mailbox = keep_mailbox(main.workdir, name, path)
        # A plain remove refuses a worktree with changes or untracked files, so for
        # a clean one, the common case, this one git call both checks and removes.
        if run(main.workdir, "worktree", "remove", path).ok:
            return Removal(name, path, True, None, mailbox)
        try:
            rescued = _rescue_or_refuse(main, name, path, rescue_ref)
            git(main.workdir, "worktree", "remove", "--force", path)
        except BaseException:
            if mailbox is not None and os.path.isdir(path):
                restore_mailbox(mailbox, path)
            raise
    return Removal(name, path, True, rescued, mailbox)


def _rescue_or_refuse(
    main: repo.MainRepo, name: str, path: str, rescue_ref: str | None
) -> str | None:
    checkout = repo.open_checkout(path)
    if checkout is None or checkout.is_main or checkout.common_dir != main.common_dir:
        raise SwarmforgeError(f"Not removing {path}: it is not a worktree of {main.workdir}.")
    if rescue_ref is None:
        if is_dirty(path):
            raise SwarmforgeError(
                f"Not removing worktree {name!r}: it has uncommitted work and no rescue ref."
            )
        return None
    message = f"swarmforge: uncommitted work of worktree {name}"
    return rescue_locked(main.workdir, checkout, rescue_ref, message)


def prune(root: str) -> Pruned:
    """Forget worktrees whose directory vanished and roll back creations that crashed.

    Their branches are kept: they may hold committed work.
    """
    main = find_project(root)
    with git_lock(main.workdir):
        rolled_back = intents.recover_locked(main.workdir, main.common_dir)
        stale = tuple(wt for wt, prunable in _porcelain(main.workdir) if prunable)
        if stale:
            git(main.workdir, "worktree", "prune")
    return Pruned(stale, tuple(rolled_back))
