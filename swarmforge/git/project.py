"""The project's repository: find its main checkout, make one, keep our directories out of git."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.filewrite import atomic_write
from swarmforge.git import repo
from swarmforge.git.command import FALLBACK_IDENTITY, git
from swarmforge.git.lock import git_lock
from swarmforge.layout import DRAFTS_DIR, STATE_DIR, WORKTREES_DIR

# Our state, and the agents' handoff drafts at the top of each checkout, which are
# never work to commit (a `tmp/` deeper down is the project's own business).
# `.swarmforge` is a symbolic link in each checkout (statedir.py), which a pattern ending
# in "/" (a directory) would not match; the worktrees are directories.
EXCLUDED = (STATE_DIR, f"{WORKTREES_DIR}/", f"/{DRAFTS_DIR}/")


def main_checkout(root: str) -> repo.Checkout:
    """The main checkout at `root`; SwarmforgeError if `root` is not the top of one."""
    found = repo.open_checkout(root)
    if found is None or not found.is_main:
        raise SwarmforgeError(
            f"{root} is not the top directory of a git repository's main checkout.",
            hint="Pass the project's top directory, or run `git init` there.",
        )
    return found


def find_project(root: str) -> repo.MainRepo:
    """The main checkout at `root`; SwarmforgeError if `root` is not the top of one."""
    found = repo.find_main(root)
    if found is None:
        raise SwarmforgeError(
            f"{root} is not the top directory of a git repository's main checkout.",
            hint="Pass the project's top directory, or run `git init` there.",
        )
    return found


def identity_config(path: str) -> tuple[str, ...]:
    """`-c` options that give git an identity, only when configuration gives none."""
    return () if repo.has_identity(path) else FALLBACK_IDENTITY


def _spellings(pattern: str) -> set[str]:
    """The lines of info/exclude that say the same as `pattern`, or more."""
    bare = pattern.strip("/")
    if not pattern.endswith("/"):
        return {bare, f"/{bare}"}  # a file, link or directory: "name/" would not say it
    return {bare, f"{bare}/", f"/{bare}", f"/{bare}/"}


def ensure_excludes_locked(common_dir: str | os.PathLike[str]) -> bool:
    """Add `.swarmforge`, `.worktrees/` and `/tmp/` to info/exclude if missing; the caller
    holds the lock.

    info/exclude lives in the common git dir, so it applies to every worktree:
    mailboxes and state inside a worktree never show up as changes there either.
    Returns True when the file was rewritten.
    """
    path = Path(common_dir, "info", "exclude")
    try:
        text = path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        text = ""
    present = {line.strip() for line in text.splitlines()}
    missing = [p for p in EXCLUDED if not present & _spellings(p)]
    if not missing:
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    text += "".join(f"{p}\n" for p in missing)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(str(path), text.encode("utf-8", "surrogateescape"))
    return True


def _init_locked(root: str) -> None:
    git(root, "init", "--quiet")
    # Before the first `git add`, so that our own state is never committed.
    ensure_excludes_locked(Path(root, ".git"))
    _first_commit_locked(root)


def _first_commit_locked(root: str) -> None:
    git(root, "add", "--all")
    git(
        root,
        "commit",
        "--quiet",
        "--allow-empty",
        "--no-verify",
        "-m",
        "Initial commit",
        options=identity_config(root),
    )


def ensure_repository(root: str) -> repo.Checkout:
    """Make `root` a git repository with a first commit if it is none; keep our dirs out of git.

    A directory that is not yet a repository gets `git init` and a first commit
    of what it holds (minus what .gitignore and info/exclude leave out). An
    existing repository is only given the exclude lines, never a commit.
    """
    if not Path(root).is_dir():
        raise SwarmforgeError(f"Project directory {root} does not exist.")
    root = os.path.realpath(root)
    if repo.open_checkout(root) is None and os.path.lexists(Path(root, ".git")):
        # A .git file or a broken .git directory: `git init` would reuse or clobber it.
        raise SwarmforgeError(f"{root}/.git exists but is not a usable git checkout.")
    with git_lock(root):
        # Looked at again under the lock: a concurrent call may have made it meanwhile.
        if repo.open_checkout(root) is None:
            _init_locked(root)
        ensure_excludes_locked(main_checkout(root).common_dir)
    return main_checkout(root)


def ensure_first_commit(root: str) -> repo.Checkout:
    """`ensure_repository`, and a first commit of what the tree holds if it has none yet
    (worktrees branch from a commit)."""
    checkout = ensure_repository(root)
    if checkout.head is not None:
        return checkout
    with git_lock(checkout.workdir):
        if main_checkout(checkout.workdir).head is None:
            _first_commit_locked(checkout.workdir)
    return main_checkout(checkout.workdir)
