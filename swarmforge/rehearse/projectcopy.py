"""The throw-away copy of a project that a rehearsal runs on: a clone of its history with its
current `swarmforge/` laid over it and committed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.git.command import GitFailed, run
from swarmforge.git.objects import lookup
from swarmforge.layout import SWARMFORGE_DIR


def copy_project(root: str | os.PathLike[str], dest: str | os.PathLike[str]) -> str:
    """A throw-away copy of the project at `root`: its history and current swarmforge/."""
    source, copy = Path(root).absolute(), Path(dest).absolute()
    root, dest = str(source), str(copy)
    try:
        has_history = lookup(root, "HEAD").oid is not None
    except GitFailed:
        has_history = False  # no repository: the copy starts one
    where = str(copy.parent)
    made = run(where, "clone", "-q", root, dest) if has_history else run(where, "init", "-q", dest)
    if not made.ok:
        detail = made.stderr.decode(errors="replace").strip()
        raise SwarmforgeError(f"Cannot copy {root} for the rehearsal: {detail}")
    shutil.copytree(source / SWARMFORGE_DIR, copy / SWARMFORGE_DIR, dirs_exist_ok=True)
    # Agents commit with a throw-away home: the copy carries its own identity.
    run(dest, "config", "user.name", "swarmforge rehearsal")
    run(dest, "config", "user.email", "rehearsal@swarmforge.invalid")
    if run(dest, "status", "--porcelain", "--", SWARMFORGE_DIR).stdout.strip():
        run(dest, "add", "--", SWARMFORGE_DIR)
        run(dest, "commit", "-q", "-m", "Swarm configuration as rehearsed")
    return dest
