"""The project's event log as a view reads it: only the lines appended since the last read."""

from __future__ import annotations

from swarmforge import eventread, events

EVENTS_KEPT = 200


class EventTail:
    """The project's event log read incrementally: only lines appended since the last read.

    The first read takes only the log's last EVENTS_KEPT lines, from its end: a view
    opening on a log of a hundred thousand events reads what it shows, not the log.
    """

    def __init__(self, root: str) -> None:
        self.path = events.log_path(root)
        self.offset: int | None = None
        self.line = 0

    def more(self) -> list[dict[str, object]]:
        """The events appended since the last call (the last EVENTS_KEPT at most)."""
        if self.offset is None:
            chunk = eventread.tail(self.path, EVENTS_KEPT)
        else:
            chunk = eventread.read(self.path, self.offset, self.line)
        self.offset, self.line = chunk.end, chunk.lines
        return chunk.events[-EVENTS_KEPT:]
