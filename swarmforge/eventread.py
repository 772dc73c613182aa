"""Reading the project's event log: from an offset on, or its last lines, never a torn line.

Readers never show a torn line: a last line without its newline is left for later,
and a line that does not parse is skipped and reported (`Chunk.bad`). A writer
killed in the middle of its write can leave a fragment that the next line is
appended to; the event after the fragment is still recovered, since `{"ts":"` can
begin only an event (inside a JSON string a quote is escaped).
"""

from __future__ import annotations

import os

from swarmforge import fsutil
from swarmforge.events import START

TYPE_CHECKING = False
if TYPE_CHECKING:
    Event = dict[str, object]


class Chunk:
    """What one read of the log found from an offset on."""

    __slots__ = ("bad", "end", "events", "lines")

    def __init__(
        self, events: list[dict[str, object]], bad: list[tuple[int, str]], end: int, lines: int
    ) -> None:
        self.events = events  # the events of the complete lines read, in order
        self.bad = bad  # (line number, why) of each complete line that held no event
        self.end = end  # the offset after the last complete line: where to read next
        self.lines = lines  # complete lines before `end`


def _event(line: bytes) -> dict[str, object] | None:
    import json

    try:
        event = json.loads(line)
    except ValueError:  # json's errors, and bytes that are not UTF-8
        return None
    if (
        isinstance(event, dict)
        and isinstance(event.get("ts"), str)
        and isinstance(event.get("kind"), str)
    ):
        return event
    return None


def parse(data: bytes, first_line: int = 1) -> tuple[list[Event], list[tuple[int, str]]]:
    """The events of complete lines `data`, and (line number, why) of the lines without one."""
    events: list[Event] = []
    bad: list[tuple[int, str]] = []
    for number, line in enumerate(data.split(b"\n")[:-1], first_line):
        if not line.strip():
            continue
        event = _event(line)
        if event is None:
            # A writer killed mid-write left a fragment, and the next event was appended
            # to it: that event is still whole at the line's last START.
            at = line.rfind(START)
            event = _event(line[at:]) if at > 0 else None
            bad.append((number, "a torn or damaged line" if event else "not an event"))
        if event is not None:
            events.append(event)
    return events, bad


def read(path: str, offset: int = 0, line: int = 0, limit: int | None = None) -> Chunk:
    """The complete lines of the log at `path` from byte `offset` (after `line` lines) on.

    A missing log has no events; a last line without its newline is not read yet. With
    `limit`, at most that many bytes are read (at least one line's worth, however
    long): call again from `Chunk.end` for more, so a long log is never held whole.
    """
    try:
        fd = fsutil.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return Chunk([], [], offset, line)
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            offset, line = 0, 0  # replaced by a shorter file: read it from the start
        os.lseek(fd, offset, os.SEEK_SET)
        parts: list[bytes] = []
        got = 0
        while True:
            part = os.read(fd, 1 << 20 if limit is None else max(limit - got, 1 << 12))
            parts.append(part)
            got += len(part)
            if not part or (limit is not None and got >= limit and any(b"\n" in p for p in parts)):
                break
    finally:
        os.close(fd)
    data = b"".join(parts)
    complete = data[: data.rfind(b"\n") + 1]
    events, bad = parse(complete, line + 1)
    return Chunk(events, bad, offset + len(complete), line + complete.count(b"\n"))


def tail(path: str, count: int) -> Chunk:
    """The last `count` complete lines of the log at `path`, read from its end.

    A view opening on a long log reads only what it shows. `Chunk.lines` counts the
    lines read, not the lines before them; `Chunk.end` is where to read on from.
    """
    try:
        fd = fsutil.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return Chunk([], [], 0, 0)
    try:
        end = start = os.fstat(fd).st_size
        data = b""
        while start > 0 and data.count(b"\n") <= count:
            step = min(start, 1 << 16)
            start -= step
            os.lseek(fd, start, os.SEEK_SET)
            data = os.read(fd, step) + data
    finally:
        os.close(fd)
    complete = data[: data.rfind(b"\n") + 1]
    end -= len(data) - len(complete)
    lines = complete.split(b"\n")[:-1]
    if start > 0:
        lines = lines[1:]  # the first may be the end of a line begun before `start`
    kept = b"".join(part + b"\n" for part in lines[-count:]) if count > 0 else b""
    events, bad = parse(kept, 1)
    return Chunk(events, bad, end, kept.count(b"\n"))
