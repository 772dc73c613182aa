"""The project's git repository: a checkout with a commit, tracking none of swarmforge's state."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.doctor.check import Check
from swarmforge.errors import SwarmforgeError
from swarmforge.git import command
from swarmforge.layout import STATE_DIRS


def check_repository(root: str) -> Check:
    """The project is a git checkout with a commit (`up` makes both, so only a warning)."""
    from swarmforge.git import repo

    checkout = repo.open_checkout(root)
    if checkout is None:
        if os.path.lexists(Path(root, ".git")):
            fix = "repair or remove it"
            return Check(
                "repository", "FAIL", f"{root}/.git exists but is not a usable git checkout", fix
            )
        fix = "`swarmforge up` runs `git init` here and commits what is here"
        return Check("repository", "warn", f"{root} is not the top of a git repository", fix)
    if checkout.head is None:
        fix = "`swarmforge up` will make a first commit"
        return Check("repository", "warn", "the repository has no commit yet", fix)
    branch = (checkout.head_ref or "detached HEAD").removeprefix("refs/heads/")
    return Check("repository", "ok", f"{checkout.workdir} at {checkout.head[:10]} ({branch})")


# The project's own state: never content of the repository (a commit could then replace it).


def check_tracked_state(root: str) -> Check:
    """Git tracks nothing under `.swarmforge/` or `.worktrees/` in the project."""
    try:
        result = command.run(root, "ls-files", "-z", "--", *STATE_DIRS)
    except SwarmforgeError:
        return Check("tracked", "ok", "no git to ask")
    if not result.ok:
        return Check("tracked", "ok", "not a git checkout")
    paths = [p for p in result.stdout.decode(errors="replace").split("\0") if p]
    dirs = sorted({p.split("/", 1)[0] for p in paths})
    if dirs:
        detail = f"git tracks {len(paths)} file(s) under {', '.join(d + '/' for d in dirs)}"
        fix = f"run `git rm -r --cached {' '.join(dirs)}` and commit: no commit may carry them"
        return Check("tracked", "FAIL", detail, fix)
    return Check("tracked", "ok", f"git tracks nothing under {', '.join(STATE_DIRS)}")
