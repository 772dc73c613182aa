"""Tokens, and the `Meter` that follows agents' session files as they grow.

Each agent that records its usage says where and how (claude/tokens.py,
codex/tokens.py): only sessions in the role's worktree count, and only what
happened since the run started. Nothing here writes anything.

Session files only grow, and long-lived processes (the delivery daemon's budget
check, `swarmforge watch`) ask for the same totals again and again, so a `Meter`
remembers, per file, how far it has read and what it found there, and on the next
call reads only the lines appended since. A file replaced or truncated meanwhile is
read again from its start; a last line still being written counts as it stands (if
it parses) but is read again next time, once complete. The totals are always what
reading every file whole would give.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

from swarmforge import fsutil

# How many (session files, worktree, since) groups a meter keeps per agent: a few per
# role and caller. The least recently asked for is forgotten first.
MAX_GROUPS = 64
# The bytes before where a file was last read, kept to notice a file rewritten in place.
TAIL_BYTES = 256


@dataclass(frozen=True)
class Tokens:
    """Tokens in, out, and read from or written to the provider's prompt cache."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def as_json(self) -> dict[str, int]:
        return {**asdict(self), "total": self.total}


class SessionFile:
    """How far one session file has been read, and what its complete lines held."""

    offset: int  # just after the last complete line read
    tail: bytes  # the bytes just before `offset`

    def __init__(self, cwd: str, since: float) -> None:
        self.cwd = cwd
        self.since = since
        self.identity: tuple[int, int] | None = None  # device and inode
        self.restart()

    def restart(self) -> None:
        """Forget what was read: the file is read from its start again."""
        self.offset = 0
        self.tail = b""

    def take(self, entry: dict[str, object]) -> None:
        """Count one complete line's object."""
        raise NotImplementedError


F = TypeVar("F", bound=SessionFile)


class _Followed(Generic[F]):
    """The session files of one agent a meter follows, in groups that share what a line
    counts for: the files' directory and pattern, the worktree and `since`."""

    def __init__(self, make: Callable[[str, float], F], max_groups: int) -> None:
        self.make = make
        self.max_groups = max_groups
        self.groups: OrderedDict[tuple[Path, str, str, float], dict[Path, F]] = OrderedDict()

    def read(
        self, directory: Path, pattern: str, cwd: str, since: float
    ) -> list[tuple[F, dict[str, object] | None]]:
        """Each file of the group brought up to date, with its line still being written.

        Files no longer matched (removed, or older than `since`) are dropped from the
        group; the least recently read group is dropped past the bound.
        """
        key = (directory, pattern, cwd, since)
        known = self.groups.pop(key, {})
        kept: dict[Path, F] = {}
        found = []
        for path in _recent(directory, pattern, since):
            tally = known.get(path) or self.make(cwd, since)
            pending = _advance(path, tally)
            if pending is None:
                continue  # removed meanwhile, or unreadable: it holds nothing
            kept[path] = tally
            found.append((tally, parse(pending) if pending else None))
        self.groups[key] = kept
        while len(self.groups) > self.max_groups:
            self.groups.popitem(last=False)
        return found


class Meter:
    """Token totals kept up to date from what session files append (module docstring).

    Safe to share between threads. A fresh meter reads every file whole.
    """

    def __init__(self, max_groups: int = MAX_GROUPS) -> None:
        self._lock = threading.Lock()
        self._max_groups = max_groups
        self._followed: dict[type[SessionFile], _Followed[Any]] = {}

    def count(
        self,
        kind: type[F],
        directory: str | os.PathLike[str],
        pattern: str,
        cwd: str,
        since: float,
        total: Callable[[list[tuple[F, dict[str, object] | None]]], Tokens],
    ) -> Tokens:
        """`total` of the files of `kind` in `directory` matching `pattern` (a glob relative to
        it), each brought up to date."""
        with self._lock:
            followed = self._followed.get(kind)
            if followed is None:
                followed = self._followed[kind] = _Followed(kind, self._max_groups)
            found: list[tuple[F, dict[str, object] | None]] = followed.read(
                Path(directory), pattern, cwd, since
            )
            return total(found)


METER = Meter()  # the one each process shares: the budget check and status use it


def _advance(path: Path, tally: SessionFile) -> bytes | None:
    """Feed `tally` the complete lines `path` gained since it was last read; the last line
    if it is still being written (b"" if none), or None if the file cannot be read."""
    try:
        # The agent's file, read where it lies (a link is followed), never waited on.
        with os.fdopen(fsutil.open_regular(str(path), os.O_RDONLY, follow=True), "rb") as f:
            st = os.fstat(f.fileno())
            identity = (st.st_dev, st.st_ino)
            if tally.identity != identity or st.st_size < tally.offset or not _same_tail(f, tally):
                tally.identity = identity
                tally.restart()
            f.seek(tally.offset)
            for raw in f:
                if not raw.endswith(b"\n"):
                    return raw
                entry = parse(raw)
                if entry is not None:
                    tally.take(entry)
                tally.offset += len(raw)
                tally.tail = (tally.tail + raw[-TAIL_BYTES:])[-TAIL_BYTES:]
    except OSError:
        return None
    return b""


def _same_tail(f: BinaryIO, tally: SessionFile) -> bool:
    """Whether the bytes before where `tally` stopped are still those it read: a file
    rewritten in place, as long as before or longer, is read again from its start."""
    if not tally.tail:
        return True
    f.seek(tally.offset - len(tally.tail))
    return f.read(len(tally.tail)) == tally.tail


def _recent(directory: Path, pattern: str, since: float) -> list[Path]:
    """The files in `directory` matching `pattern` written to since `since` (older ones hold
    nothing new), in the order of their path names. As in a shell, a wildcard matches no
    hidden name."""
    found = []
    for path in directory.glob(pattern):
        if any(part.startswith(".") for part in path.relative_to(directory).parts):
            continue
        try:
            if path.stat().st_mtime >= since:
                found.append(path)
        except OSError:
            continue  # removed meanwhile
    return sorted(found, key=str)


def parse(raw: bytes) -> dict[str, object] | None:
    """The JSON object of one line; None for a line that is not one."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def unix_time(stamp: object) -> float:
    """A Unix time from an ISO-8601 stamp (`2026-12-01T18:09:27.928Z`); 0 if there is none."""
    if not isinstance(stamp, str):
        return 0.0
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return 0.0


def count(usage: Mapping[str, object], key: str) -> int:
    value = usage.get(key)
    return value if type(value) is int and value > 0 else 0
