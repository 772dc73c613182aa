"""codex's session rollouts: what codex has spent, in tokens.

codex writes a rollout per session under
`<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl`: its first line names the
session's working directory, and each `token_count` event carries the session's
running total. The codex home is `CODEX_HOME` or `~/.codex`, taken from the role's
own environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from swarmforge.agents.tokens import METER, Meter, SessionFile, Tokens, count, unix_time


def codex_tokens(
    codex_home: str | os.PathLike[str], cwd: str, since: float, meter: Meter = METER
) -> Tokens:
    """The final running total of every codex session in `cwd` started since `since`."""
    pattern = "sessions/*/*/*/rollout-*.jsonl"
    return meter.count(_CodexFile, codex_home, pattern, cwd, since, _total)


def _total(found: list[tuple[_CodexFile, dict[str, object] | None]]) -> Tokens:
    spent = Tokens()
    for tally, pending in found:
        spent += tally.spent(pending)
    return spent


class _CodexFile(SessionFile):
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
            count(total, "input_tokens"),
            count(total, "output_tokens"),
            count(total, "cached_input_tokens"),
            count(total, "cache_write_input_tokens"),
        )


def _codex_session(first: Mapping[str, object], cwd: str, since: float) -> bool:
    """Whether a rollout whose first object is `first` is a session in `cwd` since `since`."""
    meta = first.get("payload")
    if first.get("type") != "session_meta" or not isinstance(meta, dict):
        return False
    return meta.get("cwd") == cwd and unix_time(first.get("timestamp")) >= since


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
