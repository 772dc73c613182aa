"""Where the demo works: a directory it makes itself, or an empty one.

It runs `git init` and commits there, so it refuses any directory that already holds
something, and any inside a git repository's own files.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from swarmforge.errors import SwarmforgeError
from swarmforge.git import command


def _inside_git_dir(path: Path) -> bool:
    """Whether `path` (absolute), or its nearest existing parent, lies in a .git directory or
    a bare repository, where files the demo wrote would read as git's own."""
    here = path
    while not here.is_dir():
        if here.parent == here:
            return False
        here = here.parent
    result = command.run(str(here), "rev-parse", "--is-inside-git-dir")
    return result.ok and result.stdout.strip() == b"true"


def claim_directory(directory: str | None) -> tuple[str, bool]:
    """Where the demo works, and whether it made that directory itself.

    A new temporary directory when `directory` is None; `directory` made when it is
    missing; an existing one only when it is empty. Anything else (a file, a git
    repository, a directory holding anything) is refused and left untouched.
    """
    if directory is None:
        return os.path.realpath(tempfile.mkdtemp(prefix="swarmforge-demo-")), True
    given = Path(os.path.abspath(directory))  # noqa: PTH100 - ".." dropped lexically, not via links
    if _inside_git_dir(given):
        raise SwarmforgeError(
            f"demo --dir {directory}: is inside a git repository's own files; "
            "give a new or empty directory."
        )
    try:
        given.mkdir(parents=True)
        return os.path.realpath(given), True
    except FileExistsError:
        pass  # decided below: only an empty directory will do
    except OSError as exc:
        raise SwarmforgeError(f"demo --dir {directory}: cannot make it ({exc.strerror}).") from None
    if not given.is_dir():
        raise SwarmforgeError(
            f"demo --dir {directory}: is not a directory; give a new or empty directory."
        )
    try:
        held = [entry.name for entry in given.iterdir()]
    except OSError as exc:
        raise SwarmforgeError(f"demo --dir {directory}: cannot read it ({exc.strerror}).") from None
    if held:
        what = "is a git repository" if ".git" in held else "is not empty"
        raise SwarmforgeError(
            f"demo --dir {directory}: {what}; the demo works only in a new or empty directory."
        )
    return os.path.realpath(given), False
