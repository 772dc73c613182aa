"""claude's session transcripts: what claude has spent, in tokens.

claude writes a transcript per session under `<config dir>/projects/<cwd, every
character but letters and digits as '-'>/<session>.jsonl`, with the usage of every
model message on its `assistant` lines (a message split into several lines repeats
its usage: it is counted once, by message id). The config dir is `CLAUDE_CONFIG_DIR`
or `~/.claude`, taken from the role's own environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from swarmforge.agents.tokens import METER, Meter, SessionFile, Tokens, count, unix_time


def claude_project_dir(config_dir: str | os.PathLike[str], cwd: str) -> str:
    """Where claude keeps the transcripts of sessions in `cwd`."""
    return str(Path(config_dir, "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd)))


def claude_tokens(
    config_dir: str | os.PathLike[str], cwd: str, since: float, meter: Meter = METER
) -> Tokens:
    """The usage of every model message of claude's sessions in `cwd` since `since`."""
    directory = claude_project_dir(config_dir, cwd)
    return meter.count(_ClaudeFile, directory, "*.jsonl", cwd, since, _total)


def _total(found: list[tuple[_ClaudeFile, dict[str, object] | None]]) -> Tokens:
    seen: set[str] = set()
    spent = Tokens()
    for tally, pending in found:
        # A message id counts once across files too: the first file that has it.
        for ident, used in tally.spent(pending):
            if ident not in seen:
                seen.add(ident)
                spent += used
    return spent


class _ClaudeFile(SessionFile):
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
    if entry.get("cwd") not in (None, cwd) or unix_time(entry.get("timestamp")) < since:
        return None
    return ident, Tokens(
        count(usage, "input_tokens"),
        count(usage, "output_tokens"),
        count(usage, "cache_read_input_tokens"),
        count(usage, "cache_creation_input_tokens"),
    )
