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
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime


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
    seen: set[str] = set()
    spent = Tokens()
    for path in _recent(os.path.join(claude_project_dir(config_dir, cwd), "*.jsonl"), since):
        for entry in _lines(path):
            message = entry.get("message")
            if entry.get("type") != "assistant" or not isinstance(message, dict):
                continue
            usage = message.get("usage")
            ident = message.get("id")
            if not isinstance(usage, dict) or not isinstance(ident, str) or ident in seen:
                continue
            if entry.get("cwd") not in (None, cwd) or _time(entry.get("timestamp")) < since:
                continue
            seen.add(ident)
            spent += Tokens(
                _count(usage, "input_tokens"),
                _count(usage, "output_tokens"),
                _count(usage, "cache_read_input_tokens"),
                _count(usage, "cache_creation_input_tokens"),
            )
    return spent


def codex_tokens(codex_home: str, cwd: str, since: float) -> Tokens:
    """The final running total of every codex session in `cwd` started since `since`."""
    spent = Tokens()
    pattern = os.path.join(codex_home, "sessions", "*", "*", "*", "rollout-*.jsonl")
    for path in _recent(pattern, since):
        lines = _lines(path)
        first = next(lines, {})
        meta = first.get("payload")
        if first.get("type") != "session_meta" or not isinstance(meta, dict):
            continue
        if meta.get("cwd") != cwd or _time(first.get("timestamp")) < since:
            continue
        total: dict[str, object] = {}
        for entry in lines:
            payload = entry.get("payload")
            if not isinstance(payload, dict) or payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
                total = info["total_token_usage"]
        spent += Tokens(
            _count(total, "input_tokens"),
            _count(total, "output_tokens"),
            _count(total, "cached_input_tokens"),
            _count(total, "cache_write_input_tokens"),
        )
    return spent


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


def _lines(path: str) -> Iterator[dict[str, object]]:
    """The JSON objects of a JSON-lines file; a line that is not one (a line being
    written, say) is skipped."""
    try:
        with open(path, "rb") as f:
            for raw in f:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    yield entry
    except OSError:
        return


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
