"""Worktrees at `<root>/.worktrees/<name>`: create, list, remove and prune them.

Every git write happens under the project's git lock (`lock.git_lock`);
lookups take none. Checkouts are made by the git CLI, which is faster than
libgit2 on big trees and runs hooks, filters and sparse checkout.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from swarmforge.errors import SwarmforgeError
from swarmforge.git import intents, leftovers, repo
from swarmforge.git.command import git, run
from swarmforge.git.lock import git_lock
from swarmforge.git.names import check_component, check_refname, component_problem
from swarmforge.git.orphans import keep_mailbox, restore_mailbox
from swarmforge.git.project import ensure_excludes_locked, find_project
from swarmforge.git.rescue import check_rescue_ref, is_dirty, rescue_locked
from swarmforge.layout import WORKTREES_DIR


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
    """What `prune` cleared: stale registrations, creations rolled back after a crash, and
    directories under .worktrees/ that held only what an interrupted creation leaves."""

    worktrees: tuple[Worktree, ...]
    rolled_back: tuple[str, ...]
    cleared: tuple[str, ...]


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
        _recover_locked(main)
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


def _recover_locked(main: repo.MainRepo) -> list[str]:
    """Roll back the creations that died half-way (see `intents`); their names."""
    for intent in intents.leftovers(main.workdir):
        parts = intent.branch.split("/")
        if intent.created_branch_at is None or any(component_problem(p) for p in parts):
            continue
        # `repo.create_branch` runs in-process: a creation killed inside it leaves git's
        # lock file of the new ref, which would stop the rollback and every later creation.
        lock = os.path.join(main.common_dir, "refs", "heads", *parts) + ".lock"
        if os.path.lexists(lock):
            os.unlink(lock)
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
    With `rescue_ref=None`, a worktree with uncommitted work is refused. What
    an interrupted creation left there is removed; any other directory refused.
    """
    check_component(name, "worktree name")
    if rescue_ref is not None:
        check_rescue_ref(rescue_ref)
    main = find_project(root)
    path = worktree_path(main.workdir, name)
    with git_lock(main.workdir):
        existed = os.path.lexists(path)
        if name in _recover_locked(main):
            return Removal(name, path, existed, None, None)
        if not existed:
            return Removal(name, path, leftovers.forget_locked(main, path), None, None)
        if repo.open_checkout(path) is None:
            leftovers.refuse_unless_leftover(main, "remove", name, path, ())
            leftovers.discard_locked(main, path)
            return Removal(name, path, True, None, None)
        return _remove_checkout_locked(main, name, path, rescue_ref)


def _remove_checkout_locked(
    main: repo.MainRepo, name: str, path: str, rescue_ref: str | None
) -> Removal:
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
        raise SwarmforgeError(
            f"Not removing {path}: it is not a worktree of {main.workdir}.",
            hint=f"Move it elsewhere if it is needed; else: rm -rf {shlex.quote(path)}",
        )
    if rescue_ref is None:
        if is_dirty(path):
            raise SwarmforgeError(
                f"Not removing worktree {name!r}: it has uncommitted work and no rescue ref."
            )
        return None
    message = f"swarmforge: uncommitted work of worktree {name}"
    return rescue_locked(main.workdir, checkout, rescue_ref, message)


def prune(root: str) -> Pruned:
    """Forget worktrees whose directory vanished, roll back creations that crashed, and
    remove directories under .worktrees/ that hold only what an interrupted creation leaves.

    Branches are kept: they may hold committed work. So is any directory that may hold work.
    """
    main = find_project(root)
    with git_lock(main.workdir):
        rolled_back = _recover_locked(main)
        parent = os.path.join(main.workdir, WORKTREES_DIR)
        # One of ours whose directory is gone is stale even when locked (by an add that
        # died, or by hand), which `git worktree prune` leaves.
        listed = _porcelain(main.workdir)
        ours_gone = [
            wt
            for wt, _ in listed
            if os.path.dirname(wt.path) == parent and not os.path.lexists(wt.path)
        ]
        stale = tuple(wt for wt, prunable in listed if prunable or wt in ours_gone)
        if stale:
            git(main.workdir, "worktree", "prune")
        for wt in ours_gone:
            leftovers.forget_locked(main, wt.path)
        cleared = tuple(_clear_leftovers_locked(main))
    return Pruned(stale, tuple(rolled_back), cleared)


def _clear_leftovers_locked(main: repo.MainRepo) -> list[str]:
    parent = os.path.join(main.workdir, WORKTREES_DIR)
    try:
        entries = sorted(os.listdir(parent))
    except FileNotFoundError:
        return []
    cleared = []
    for name in entries:
        path = os.path.join(parent, name)
        if not os.path.isdir(path) or os.path.islink(path) or repo.open_checkout(path):
            continue
        if leftovers.work_held(main, path, ()) is None:
            leftovers.discard_locked(main, path)
            cleared.append(name)
    return cleared
