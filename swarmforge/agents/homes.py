"""What claude's and codex's config modules share: homes, trust keys, reading, `Blocker`.

Both agents look under the home directory they see and record trust under the
project's real path. A missing file reads as None; one the agent could not read
either (not a regular file, or damaged) is a `CorruptFile` whose hint says nothing was
written.
"""

from __future__ import annotations

import os
import pwd
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from swarmforge import fsutil
from swarmforge.errors import CorruptFile, SwarmforgeError

Env = Mapping[str, str]
NEW_FILE_MODE = 0o600  # what both agents give the files they create
# Far above what either agent keeps there (claude's file, the larger, holds a few megabytes
# of project entries): a larger file is refused unread.
CONFIG_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Blocker:
    """Something that would stop `agent` from starting unattended, and the command that fixes it."""

    agent: str
    problem: str
    fix: str


def home_dir(env: Env) -> str:
    """The home directory the agents see: $HOME, else the account's (as Node and Rust do)."""
    if env.get("HOME"):
        return env["HOME"]
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        raise SwarmforgeError(
            "HOME is not set and this account has no home directory.", hint="Set HOME."
        ) from None


def trust_key(project_root: str) -> str:
    """The path both agents record trust under: the project's real path."""
    return os.path.realpath(project_root)


def read(path: str | os.PathLike[str]) -> bytes | None:
    """The file's bytes (through a symbolic link, as the agent reads it), or None when
    there is no file; CorruptFile naming it when it is not a regular file (a FIFO is
    never waited on) or is larger than CONFIG_LIMIT."""
    try:
        return fsutil.read_regular(os.fspath(path), limit=CONFIG_LIMIT, follow=True)
    except FileNotFoundError:
        return None
    except (fsutil.NotRegularFile, fsutil.FileTooLarge) as exc:
        error = CorruptFile(os.fspath(path), None, exc.strerror or str(exc))
        error.hint = "Remove it, or put the agent's own file there; nothing was written."
        raise error from None


def corrupt(path: str, line: int | None, problem: str) -> CorruptFile:
    """The error for an agent file that cannot be read (`line` where known)."""
    error = CorruptFile(path, line, problem)
    error.hint = "Repair it by hand (the agent cannot read it either); nothing was written."
    return error


def text(path: str, data: bytes) -> str:
    """`data` as UTF-8, or the error naming the first line that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise corrupt(path, data[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None


def edit_command(path: str) -> str:
    """The fix for a file only a person can repair: open it in their editor, or remove it
    where it is no regular file (a FIFO, which no editor opens)."""
    try:
        regular = stat.S_ISREG(Path(path).stat().st_mode)
    except OSError:
        regular = True  # missing or out of reach: the editor says which
    return f"${{EDITOR:-vi}} {shlex.quote(path)}" if regular else f"rm {shlex.quote(path)}"
