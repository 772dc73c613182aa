"""What the daemon tells of its passes: log lines and events per outcome, a lasting failure once."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge import events
from swarmforge.daemon import held
from swarmforge.handoff.outcome import DELIVERED, FAILED, HELD, Outcome
from swarmforge.text import shown

if TYPE_CHECKING:
    from swarmforge.net.incoming import Received


class Report:
    """The daemon's log and the project's event log, as the dispatcher (dispatcher.py) feeds them.

    `stuck` holds each outbox file that can be neither delivered nor failed, with the
    error last logged for it: a lasting failure is logged once, not on every pass.
    """

    def __init__(self, root: str, log: logging.Logger) -> None:
        self.root = root
        self.log = log
        self.stuck: dict[str, str] = {}  # outbox path -> the error last logged for it
        self.events = events.EventLog(root, on_error=self._event_dropped)
        self._dropping = ""  # the last error that dropped an event, logged once

    def arrival(self, role: str, got: Received) -> bool:
        """Tell what became of mail from another host for `role`; True if it was delivered."""
        if got.status == "delivered":
            self.log.info("delivered %s to %s (from another host)", got.name, role)
            fields = {"name": got.name, "from": got.sender or None, "to": role}
            self.events.emit("handoff-delivered", {**fields, "priority": got.priority or None})
            for problem in got.unchecked:
                self.log.warning("%s", problem)
            self.events.emit_many(("merge-conflict", c) for c in got.conflicts)
            return True
        if got.status == "failed":
            self.log.error("failed %s from another host: %s", shown(got.name), got.reason)
            self.events.emit("handoff-failed", {"name": got.name, "to": role, "reason": got.reason})
        elif got.status == "held":
            self.log.warning("holding %s for %s: %s", shown(got.name), role, got.reason)
        return False

    def stuck_at(self, path: str, error: str) -> None:
        """Log a file that can be neither delivered nor failed once, not on every pass."""
        if self.stuck.get(path) != error:
            self.log.error("delivering %s failed, will retry: %s", shown(path), error)
            self.stuck[path] = error
            self.events.emit("handoff-held", {"name": Path(path).name, "reason": error})
            self._record()

    def unstuck(self, path: str) -> None:
        """The file at `path` moved on: a new failure of it is logged again."""
        if self.stuck.pop(path, None) is not None:
            self._record()

    def still_waiting(self, paths: set[str]) -> None:
        """Forget the stuck files that no longer wait in an outbox."""
        gone = set(self.stuck) - paths
        for path in gone:
            del self.stuck[path]
        if gone:
            self._record()

    def _record(self) -> None:
        """Write what is held for `status` and `doctor` to show (held.py)."""
        try:
            held.write(self.root, self.stuck)
        except OSError as exc:
            self.log.warning("cannot record the mail held: %s", exc)

    def _event_dropped(self, exc: OSError) -> None:
        """Log an event log that cannot be written once, not on every event."""
        if str(exc) != self._dropping:
            self.log.warning("events are not recorded: %s", exc)
            self._dropping = str(exc)

    def outcome(self, outcome: Outcome, remote: Mapping[str, str]) -> None:
        """Tell what became of one outbox file; `remote`: the hosts of other hosts' roles."""
        sender = {"from": outcome.sender} if outcome.sender else {}
        if outcome.status == FAILED:
            self.log.error("failed %s: %s", shown(outcome.name), outcome.reason)
            failed = {"name": outcome.name, **sender, "reason": outcome.reason}
            self.events.emit("handoff-failed", failed)
        elif outcome.status == DELIVERED:
            self.log.info(
                "delivered %s to %s",
                outcome.name,
                ",".join(outcome.copied) or "(every copy was already there)",
            )
        elif outcome.status == HELD and outcome.copied:
            self.log.info("delivered %s to %s only", outcome.name, ",".join(outcome.copied))
        for role in outcome.published:
            host = remote.get(role) or "the first host"
            self.log.info("sent %s to %s on %s", outcome.name, role, host)
        self.events.emit_many(
            (
                "handoff-sent",
                {"name": outcome.name, **sender, "to": role, "host": remote.get(role) or None},
            )
            for role in outcome.published
        )
        self.events.emit_many(
            (
                "handoff-delivered",
                {"name": outcome.name, **sender, "to": role, "priority": outcome.priority or None},
            )
            for role in outcome.copied
        )
        for problem in outcome.unchecked:
            self.log.warning("%s", problem)
        self.events.emit_many(("merge-conflict", fields) for fields in outcome.conflicts)
