"""What each agent has spent, in tokens, read from the agent's own session files.

claude writes a transcript per session under `<config dir>/projects/<cwd, every
character but letters and digits as '-'>/<session>.jsonl`, with the usage of every
model message on its `assistant` lines (a message split into several lines repeats
its usage: it is counted once, by message id). codex writes a rollout per session
under `<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl`: its first line names the
session's working directory, and each `token_count` event carries the session's
running total. The config dir is `CLAUDE_CONFIG_DIR` or `~/.claude`, the codex home
`CODEX_HOME` or `~/.codex`, both taken from the role's own environment.

Only sessions in the role's worktree count, and only what happened since the run
started. Nothing here writes anything.

Session files only grow, and long-lived processes (the delivery daemon's budget
check, `swarmforge watch`) ask for the same totals again and again, so a `Meter`
remembers, per file, how far it has read and what it found there, and on the next
call reads only the lines appended since. A file replaced or truncated meanwhile is
read again from its start; a last line still being written counts as it stands (if
it parses) but is read again next time, once complete. The totals are always what
reading every file whole would give.
"""

from __future__ import annotations

import glob
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import BinaryIO, Generic, TypeVar

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


def role_tokens(agent: str, env: Mapping[str, str], cwd: str, since: float) -> Tokens | None:
    """What the `agent` working in `cwd` spent since `since` (a Unix time); None for an
    agent whose session files are not known (anything but claude and codex)."""
    home = env.get("HOME") or os.path.expanduser("~")
    if agent == "claude":
        return claude_tokens(
            env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"), cwd, since
        )
    if agent == "codex":
        return codex_tokens(env.get("CODEX_HOME") or os.path.join(home, ".codex"), cwd, since)
    return None


def claude_project_dir(config_dir: str, cwd: str) -> str:
    """Where claude keeps the transcripts of sessions in `cwd`."""
    return os.path.join(config_dir, "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd))


def claude_tokens(config_dir: str, cwd: str, since: float) -> Tokens:
    """The usage of every model message of claude's sessions in `cwd` since `since`."""
    return METER.claude(config_dir, cwd, since)


def codex_tokens(codex_home: str, cwd: str, since: float) -> Tokens:
    """The final running total of every codex session in `cwd` started since `since`."""
    return METER.codex(codex_home, cwd, since)


class _File:
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


class _ClaudeFile(_File):
    """A claude transcript: the usage of each message, by id, in the order first found."""

    messages: dict[str, Tokens]

    def restart(self) -> None:
        super().restart()
        self.messages = {}

    def take(self, entry: dict[str, object]) -> None:
        found = _claude_message(entry, self.cwd, self.since)
        if found is not None and found[0] not in self.messages:
            self.messages[found[0]] = found[1]

    def spent(self, pending: dict[str, object] | None) -> Iterator[tuple[str, Tokens]]:
        """Each message's id and usage, the line still being written (`pending`) last."""
        yield from self.messages.items()
        found = None if pending is None else _claude_message(pending, self.cwd, self.since)
        if found is not None and found[0] not in self.messages:
            yield found


class _CodexFile(_File):
    """A codex rollout: whether it is a session of ours, and its latest running total."""

    ours: bool | None  # None until its first object is read
    total: Mapping[str, object]

    def restart(self) -> None:
        super().restart()
        self.ours = None
        self.total = {}

    def take(self, entry: dict[str, object]) -> None:
        if self.ours is None:
            self.ours = _codex_session(entry, self.cwd, self.since)
        elif self.ours:
            total = _codex_total(entry)
            if total is not None:
                self.total = total

    def spent(self, pending: dict[str, object] | None) -> Tokens:
        """The session's total, counting the line still being written (`pending`)."""
        ours, total = self.ours, self.total
        if pending is not None:
            if ours is None:
                ours = _codex_session(pending, self.cwd, self.since)
            elif ours:
                latest = _codex_total(pending)
                total = total if latest is None else latest
        if not ours:
            return Tokens()
        return Tokens(
            _count(total, "input_tokens"),
            _count(total, "output_tokens"),
            _count(total, "cached_input_tokens"),
            _count(total, "cache_write_input_tokens"),
        )


F = TypeVar("F", bound=_File)


class _Followed(Generic[F]):
    """The session files of one agent a meter follows, in groups that share what a line
    counts for: the files' pattern, the worktree and `since`."""

    def __init__(self, make: Callable[[str, float], F], max_groups: int) -> None:
        self.make = make
        self.max_groups = max_groups
        self.groups: OrderedDict[tuple[str, str, float], dict[str, F]] = OrderedDict()

    def read(
        self, pattern: str, cwd: str, since: float
    ) -> list[tuple[F, dict[str, object] | None]]:
        """Each file of the group brought up to date, with its line still being written.

        Files no longer matched (removed, or older than `since`) are dropped from the
        group; the least recently read group is dropped past the bound.
        """
        key = (pattern, cwd, since)
        known = self.groups.pop(key, {})
        kept: dict[str, F] = {}
        found = []
        for path in _recent(pattern, since):
            tally = known.get(path) or self.make(cwd, since)
            pending = _advance(path, tally)
            if pending is None:
                continue  # removed meanwhile, or unreadable: it holds nothing
            kept[path] = tally
            found.append((tally, _parse(pending) if pending else None))
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
        self._claude = _Followed(_ClaudeFile, max_groups)
        self._codex = _Followed(_CodexFile, max_groups)

    def claude(self, config_dir: str, cwd: str, since: float) -> Tokens:
        """The usage of every model message of claude's sessions in `cwd` since `since`."""
        pattern = os.path.join(claude_project_dir(config_dir, cwd), "*.jsonl")
        seen: set[str] = set()
        spent = Tokens()
        with self._lock:
            for tally, pending in self._claude.read(pattern, cwd, since):
                # A message id counts once across files too: the first file that has it.
                for ident, used in tally.spent(pending):
                    if ident not in seen:
                        seen.add(ident)
                        spent += used
        return spent

    def codex(self, codex_home: str, cwd: str, since: float) -> Tokens:
        """The final running total of every codex session in `cwd` started since `since`."""
        pattern = os.path.join(codex_home, "sessions", "*", "*", "*", "rollout-*.jsonl")
        spent = Tokens()
        with self._lock:
            for tally, pending in self._codex.read(pattern, cwd, since):
                spent += tally.spent(pending)
        return spent


METER = Meter()  # the one each process shares: role_tokens and status use it


def _advance(path: str, tally: _File) -> bytes | None:
    """Feed `tally` the complete lines `path` gained since it was last read; the last line
    if it is still being written (b"" if none), or None if the file cannot be read."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            identity = (st.st_dev, st.st_ino)
            if tally.identity != identity or st.st_size < tally.offset or not _same_tail(f, tally):
                tally.identity = identity
                tally.restart()
            f.seek(tally.offset)
            for raw in f:
                if not raw.endswith(b"\n"):
                    return raw
                entry = _parse(raw)
                if entry is not None:
                    tally.take(entry)
                tally.offset += len(raw)
                tally.tail = (tally.tail + raw[-TAIL_BYTES:])[-TAIL_BYTES:]
    except OSError:
        return None
    return b""


def _same_tail(f: BinaryIO, tally: _File) -> bool:
    """Whether the bytes before where `tally` stopped are still those it read: a file
    rewritten in place, as long as before or longer, is read again from its start."""
    if not tally.tail:
        return True
    f.seek(tally.offset - len(tally.tail))
    return f.read(len(tally.tail)) == tally.tail


def _claude_message(
    entry: Mapping[str, object], cwd: str, since: float
) -> tuple[str, Tokens] | None:
    """A model message's id and usage, if `entry` is one in `cwd` since `since`."""
    message = entry.get("message")
    if entry.get("type") != "assistant" or not isinstance(message, dict):
        return None
    usage = message.get("usage")
    ident = message.get("id")
    if not isinstance(usage, dict) or not isinstance(ident, str):
        return None
    if entry.get("cwd") not in (None, cwd) or _time(entry.get("timestamp")) < since:
        return None
    return ident, Tokens(
        _count(usage, "input_tokens"),
        _count(usage, "output_tokens"),
        _count(usage, "cache_read_input_tokens"),
        _count(usage, "cache_creation_input_tokens"),
    )


def _codex_session(first: Mapping[str, object], cwd: str, since: float) -> bool:
    """Whether a rollout whose first object is `first` is a session in `cwd` since `since`."""
    meta = first.get("payload")
    if first.get("type") != "session_meta" or not isinstance(meta, dict):
        return False
    return meta.get("cwd") == cwd and _time(first.get("timestamp")) >= since


def _codex_total(entry: Mapping[str, object]) -> Mapping[str, object] | None:
    """The running total a `token_count` event carries; None for any other line."""
    payload = entry.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return None
    info = payload.get("info")
    if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
        total: Mapping[str, object] = info["total_token_usage"]
        return total
    return None


def _recent(pattern: str, since: float) -> list[str]:
    """The files matching `pattern` written to since `since`: older ones hold nothing new."""
    found = []
    for path in glob.glob(pattern):
        try:
            if os.stat(path).st_mtime >= since:
                found.append(path)
        except OSError:
            continue  # removed meanwhile
    return sorted(found)


def _parse(raw: bytes) -> dict[str, object] | None:
    """The JSON object of one line; None for a line that is not one."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _time(stamp: object) -> float:
    """A Unix time from an ISO-8601 stamp (`2026-12-01T18:09:27.928Z`); 0 if there is none."""
    if not isinstance(stamp, str):
        return 0.0
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return 0.0


def _count(usage: Mapping[str, object], key: str) -> int:
    value = usage.get(key)
    return value if type(value) is int and value > 0 else 0
