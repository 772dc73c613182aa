"""Reading the project's event log: from an offset on, or its last lines, never a torn line.

Readers never show a torn line: a last line without its newline is left for later,
and a line that does not parse is skipped and reported (`Chunk.bad`). A writer
killed in the middle of its write can leave a fragment that the next line is
appended to; the event after the fragment is still recovered, since `{"ts":"` can
begin only an event (inside a JSON string a quote is escaped).

The log is read in blocks, and a line is held only up to LINE_LIMIT bytes: a longer
one (no event is near that long) is skipped unparsed and reported in `Chunk.bad`, its
bytes dropped as they are read, so one huge line costs a reader the time of reading
it and never its size in memory. One still being written when it passes the limit is
skipped all the same, and what follows it up to its newline read as a line of its own.
"""

from __future__ import annotations

import os

from swarmforge import fsutil
from swarmforge.events import START

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    Event = dict[str, object]

LINE_LIMIT = 1 << 20  # bytes of one line held to parse it; a longer one is skipped
BLOCK = 1 << 16  # bytes read at a time


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


def _take(line: bytes, number: int, events: list[Event], bad: list[tuple[int, str]]) -> None:
    """Add the event of `line` (line `number`) to `events`, or why it holds none to `bad`."""
    if not line.strip():
        return
    event = _event(line)
    if event is None:
        # A writer killed mid-write left a fragment, and the next event was appended
        # to it: that event is still whole at the line's last START.
        at = line.rfind(START)
        event = _event(line[at:]) if at > 0 else None
        bad.append((number, "a torn or damaged line" if event else "not an event"))
    if event is not None:
        events.append(event)


def _too_long(limit: int) -> str:
    return f"a line longer than {limit:,} bytes"


def _lines(fd: int, stop: int | None, limit: int) -> Iterator[tuple[int, bytes | None, bool]]:
    """The lines read from `fd`'s position on (at most `stop` bytes): for each, the bytes
    read through it, its bytes (None where longer than `limit`, never held) and whether
    it is complete. A last line without its newline is given only once it is too long."""
    done = 0  # bytes read
    held = bytearray()  # the current line so far, while it is within `limit`
    skipping = False  # the current line is longer than `limit`: its bytes are dropped
    while stop is None or done < stop:
        block = os.read(fd, BLOCK if stop is None else min(BLOCK, stop - done))
        if not block:
            break
        at = 0
        while (newline := block.find(b"\n", at)) >= 0:
            if skipping:
                text = None
            elif held:
                held += block[at:newline]
                text = bytes(held) if len(held) <= limit else None
                held.clear()
            else:  # the whole line in this block: the usual case, with no copy to make
                text = block[at:newline] if newline - at <= limit else None
            yield done + newline + 1, text, True
            skipping = False
            at = newline + 1
        done += len(block)
        if not skipping:
            held += block[at:]
            if len(held) > limit:
                held.clear()
                skipping = True
    if skipping:
        yield done, None, False


def _chunk(
    fd: int, offset: int, line: int, stop: int | None, limit: int | None, longest: int
) -> Chunk:
    """The lines of `fd` from `offset` on (after `line` lines), up to `stop` bytes, ending
    at the first line boundary past `limit` bytes."""
    events: list[Event] = []
    bad: list[tuple[int, str]] = []
    end, lines = offset, line
    for through, text, complete in _lines(fd, stop, longest):
        end = offset + through
        lines += complete
        if text is None:
            bad.append((lines if complete else lines + 1, _too_long(longest)))
        else:
            _take(text, lines, events, bad)
        if limit is not None and end - offset >= limit:
            break
    return Chunk(events, bad, end, lines)


def read(
    path: str, offset: int = 0, line: int = 0, limit: int | None = None, longest: int = LINE_LIMIT
) -> Chunk:
    """The complete lines of the log at `path` from byte `offset` (after `line` lines) on.

    A missing log has no events; a last line without its newline is not read yet. With
    `limit`, reading stops at the first line that ends past `limit` bytes: call again
    from `Chunk.end` for more, so a long log is never held whole. A line longer than
    `longest` bytes is skipped (see the module).
    """
    try:
        fd = fsutil.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return Chunk([], [], offset, line)
    try:
        if os.fstat(fd).st_size < offset:
            offset, line = 0, 0  # replaced by a shorter file: read it from the start
        os.lseek(fd, offset, os.SEEK_SET)
        return _chunk(fd, offset, line, None, limit, longest)
    finally:
        os.close(fd)


def _starts(fd: int, size: int, count: int) -> tuple[int, int]:
    """Where the last `count` complete lines of `fd` (`size` bytes) begin, and where they
    end: found by looking for newlines from the end, a block at a time."""
    end = found = 0
    pos = size
    while pos > 0:
        step = min(pos, BLOCK)
        pos -= step
        block = os.pread(fd, step, pos)
        at = len(block)
        while (newline := block.rfind(b"\n", 0, at)) >= 0:
            found += 1
            if found == 1:
                end = pos + newline + 1
            if found == count + 1:
                return pos + newline + 1, end
            at = newline
    return 0, end


def tail(path: str, count: int, longest: int = LINE_LIMIT) -> Chunk:
    """The last `count` complete lines of the log at `path`, read from its end.

    A view opening on a long log reads only what it shows. `Chunk.lines` counts the
    lines read, not the lines before them; `Chunk.end` is where to read on from. A line
    longer than `longest` bytes is skipped (see the module).
    """
    try:
        fd = fsutil.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return Chunk([], [], 0, 0)
    try:
        start, end = _starts(fd, os.fstat(fd).st_size, count)
        os.lseek(fd, start, os.SEEK_SET)
        found = _chunk(fd, 0, 0, end - start, None, longest)
    finally:
        os.close(fd)
    return Chunk(found.events, found.bad, end, found.lines)
