"""What an interrupted worktree creation leaves, told apart from work, and removed.

A `git worktree add` killed half-way, or outliving the caller that rolled it back,
can leave at `.worktrees/<name>` an empty directory, a `.git` file naming an admin
dir that is gone, and part of a checkout; git keeps registrations of directories
that are gone when it had locked them. None of that holds anyone's work, so it is
removed; a directory holding any other file is refused, never touched.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from pathlib import Path

from swarmforge import statedir
from swarmforge.errors import SwarmforgeError
from swarmforge.git import repo
from swarmforge.git.command import git, run
from swarmforge.git.objects import lookup
from swarmforge.layout import STATE_DIR
from swarmforge.proc import policy
from swarmforge.statedir import git_dir_of


def refuse_unless_leftover(
    main: repo.MainRepo, doing: str, name: str, path: str, revs: tuple[str, ...]
) -> None:
    """Raise unless `path`, which is no checkout, holds only what an interrupted creation
    leaves (a checkout of one of `revs` or HEAD, maybe partial), which is safe to remove."""
    problem = work_held(main, path, revs)
    if problem is not None:
        raise SwarmforgeError(
            f"Cannot {doing} worktree {name!r}: {path} is not a worktree of {main.workdir} "
            f"and may hold someone's work: {problem}.",
            hint=f"Move what you need out of it, then run: rm -r {shlex.quote(path)}",
        )


def work_held(main: repo.MainRepo, path: str, revs: tuple[str, ...]) -> str | None:
    """Why `path`, which is no checkout, may hold work; None if it holds no file or only a
    partial checkout of one of `revs` (or HEAD), as an interrupted `git worktree add` does."""
    tree = Path(path)
    if tree.is_symlink() or not tree.is_dir():
        return "it is no directory"
    # swarmforge's own view: its state (the mailbox) lies out of the directory, kept.
    view = statedir.own_view(path)
    if not _holds_files(path, skip=STATE_DIR if view else ""):
        return None
    dotgit = tree / ".git"
    if dotgit.is_dir():
        return "it holds a .git directory"
    if os.path.lexists(dotgit) and not _points_to_admin(main, dotgit):
        return "its .git file names another repository"
    commits = dict.fromkeys(lookup(main.workdir, rev).commit for rev in (*revs, "HEAD"))
    if any(c is not None and _partial_checkout_of(main, path, c, view) for c in commits):
        return None
    return "it holds files that a checkout of its branch or of HEAD would not"


def _holds_files(directory: str, skip: str = "") -> bool:
    for dirpath, dirnames, filenames in os.walk(directory):
        if dirpath == directory and skip:
            filenames = [f for f in filenames if f != skip]
            dirnames[:] = [d for d in dirnames if d != skip]
        # os.walk lists symlinks to directories among dirnames; they count as content.
        if filenames or any(Path(dirpath, d).is_symlink() for d in dirnames):
            return True
    return False


def _points_to_admin(main: repo.MainRepo, dotgit: Path) -> bool:
    """True when the `.git` file `dotgit` names a directory under `<common dir>/worktrees/`."""
    gitdir = git_dir_of(str(dotgit.parent))
    if gitdir is None:
        return False
    # realpath, not resolve(): a symlink loop is no directory of ours, never an error.
    admin = Path(os.path.realpath(gitdir)).parent
    return admin == Path(main.common_dir, "worktrees")


def _partial_checkout_of(main: repo.MainRepo, path: str, commit: str, view: bool) -> bool:
    """True when every file under `path` is the file `commit` holds there, unchanged (but
    for swarmforge's own `.swarmforge` view, if `view`)."""
    fd, scratch = tempfile.mkstemp(prefix="swarmforge-check-", suffix=".index", dir=main.common_dir)
    os.close(fd)
    Path(scratch).unlink()  # git writes the index afresh; an empty file would be a corrupt one
    tree = (f"--git-dir={main.common_dir}", f"--work-tree={path}")
    env = policy.child_env({"GIT_INDEX_FILE": scratch})
    try:
        git(main.workdir, "read-tree", commit, env=env, options=tree)
        # Exits non-zero when files differ; diff-files below says how.
        run(main.workdir, *tree, "update-index", "-q", "--refresh", env=env)
        changes = git(main.workdir, "diff-files", "--name-status", "-z", env=env, options=tree)
        # Without --exclude-standard: ignored files (mailbox items) count as work too.
        others = git(main.workdir, "ls-files", "-z", "--others", env=env, options=tree)
    finally:
        for leftover in (scratch, scratch + ".lock"):
            if os.path.lexists(leftover):
                Path(leftover).unlink()
    statuses = changes.split("\0")[0::2]
    extra = [name for name in others.split("\0") if name and not (view and name == STATE_DIR)]
    return not extra and all(s in ("D", "") for s in statuses)


def discard_locked(main: repo.MainRepo, path: str) -> None:
    """Remove the directory at `path` and any registration of it; the caller holds the lock
    and has made sure that it holds no work."""
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        raise SwarmforgeError(
            f"Cannot remove {path}, left by an interrupted worktree creation.",
            hint=f"Remove it by hand: rm -r {shlex.quote(path)}",
        )
    forget_locked(main, path)


def forget_locked(main: repo.MainRepo, path: str) -> bool:
    """Drop every registration of `path`, whose directory is gone; True if there was one."""
    admins = repo.admin_dirs_for(main.common_dir, path)
    for admin in admins:
        # Not `git worktree prune`, which keeps a worktree git locked while checking it
        # out (an add that died) and one locked by hand: with its files gone, its admin
        # dir (HEAD, index, reflog) holds nothing of value; the branch is kept.
        shutil.rmtree(admin, ignore_errors=True)
    return bool(admins)
