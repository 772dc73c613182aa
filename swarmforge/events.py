"""The project's event log, `.swarmforge/events.jsonl`: what happened, one JSON line each.

Many processes append to it at once (the gate, the daemon, the receive helpers, the
runner, the pane supervisors, the planned-run orchestrator): each line is written
with one `os.write` on an `O_APPEND` descriptor, so lines never interleave. It is an
observation log, not the source of truth (the mailbox directories, the session record and
a run's journal are): nothing is fsynced, and a machine crash may lose its last
lines. Writing an event never fails what emits it: an OSError (a full disk, a
read-only directory, something other than a regular file in its place) drops the
event, and `on_error` hears of it where the writer keeps a log.

Each event is an object with `ts` (UTC, ISO-8601 with microseconds) first, then
`kind`, then its fields (docs/events.md lists them). A value is a string, number,
boolean, or a list or object of those; strings are kept to one printable line and
handoff bodies never go in. Readers never show a torn line: a last line without its
newline is left for later, and a line that does not parse is skipped and reported
(`Chunk.bad`). A writer killed in the middle of its write can leave a fragment that
the next line is appended to; the event after the fragment is still recovered, since
`{"ts":"` can begin only an event (inside a JSON string a quote is escaped).
"""

from __future__ import annotations

import os

from swarmforge import fsutil, times
from swarmforge.layout import EVENTS_LOG

TYPE_CHECKING = False  # typing itself costs milliseconds on the helpers' hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    Fields = Mapping[str, object]
    Event = dict[str, object]
    OnError = Callable[[OSError], None]

_quote: Callable[[str], str] | None
try:
    import _json

    _quote = _json.encode_basestring_ascii  # json's own C function quoting a string: see _flat
except ImportError:  # an interpreter without json's accelerator: json.dumps does it all
    _quote = None

MAX_TEXT = 500  # characters kept of one string value: an event is a line, not a report
START = b'{"ts":"'  # how every event's line begins (see the module docstring)


def log_path(root: str) -> str:
    """The event log of the project at `root`."""
    return os.path.join(root, EVENTS_LOG)


def _text(value: str) -> str:
    if len(value) > MAX_TEXT:
        value = value[: MAX_TEXT - 3] + "..."
    return _printable(value)


def _printable(value: str) -> str:
    """`value` on one line: line breaks and other control characters as escapes."""
    if value.isprintable():
        return value
    return "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
        for c in value
    )


def _clean(value: object) -> object:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_clean(v) for v in value]
    return value


def encode(kind: str, fields: Fields, ts: str) -> bytes:
    """One event as its line (newline included); fields that are None are left out.

    The line is what `json.dumps(event, separators=(",", ":"))` makes.
    """
    event: dict[str, object] = {"ts": ts, "kind": kind}
    for key, value in fields.items():
        if value is not None and key not in event:
            event[key] = _text(value) if type(value) is str else _clean(value)
    text = _flat(event)
    if text is None:
        import json  # here, not at import: see _flat

        text = json.dumps(event, separators=(",", ":"), default=str)
    return (text + "\n").encode()


def _flat(event: dict[str, object]) -> str | None:
    """`event` as compact JSON if every value is a string, an int or a boolean; else None.

    Importing json imports re, enum and functools: some 10 ms on the helpers, which take
    20 in all, for events whose values are all strings. So the json module's own C
    function quotes the strings here (what json.dumps uses), and anything else is left
    to json.dumps.
    """
    quote = _quote
    if quote is None:
        return None
    parts = []
    for key, value in event.items():
        if type(value) is str:
            text = quote(value)
        elif type(value) is bool:
            text = "true" if value else "false"
        elif type(value) is int:
            text = int.__repr__(value)
        else:
            return None  # subclasses too: json.dumps knows how it writes them
        parts.append(f"{quote(key)}:{text}")
    return "{" + ",".join(parts) + "}"


class EventLog:
    """Appends events to the log of the project at `root` (see the module docstring)."""

    __slots__ = ("on_error", "path")

    def __init__(self, root: str, on_error: OnError | None = None) -> None:
        self.path = log_path(root)
        self.on_error = on_error

    def emit(self, kind: str, fields: Fields) -> bool:
        """Append one event of `kind`; False if it was dropped."""
        return self.emit_many([(kind, fields)])

    def emit_many(self, events: Iterable[tuple[str, Fields]]) -> bool:
        """Append `events` with one write, all stamped now; False if they were dropped."""
        ts = times.precise()
        data = b"".join(encode(kind, fields, ts) for kind, fields in events)
        if not data:
            return True
        try:
            fd = fsutil.open_append(self.path)
            try:
                written = os.write(fd, data)
            finally:
                os.close(fd)
            if written != len(data):
                raise OSError(28, "No space left on device (event cut short)", self.path)
        except OSError as exc:
            if self.on_error is not None:
                self.on_error(exc)
            return False
        return True


def emit(root: str, kind: str, fields: Fields) -> bool:
    """Append one event to the log of the project at `root`; False if it was dropped."""
    return EventLog(root).emit(kind, fields)


# -- reading ---------------------------------------------------------------------------------


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


# -- showing ---------------------------------------------------------------------------------


def words(value: object) -> str:
    """A field's value for a line of text: lists as `a,b`, objects as compact JSON."""
    if isinstance(value, str):
        return value if value and not any(c.isspace() for c in value) else _quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list) and all(isinstance(v, (str, int)) for v in value):
        return ",".join(str(v) for v in value) or "-"
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _quoted(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def line(event: Mapping[str, object]) -> str:
    """One event as one line of text: time, kind, then its fields as `key=value`."""
    rest = " ".join(f"{k}={words(v)}" for k, v in event.items() if k not in ("ts", "kind"))
    # A hand-edited log may hold anything: nothing it says can move the terminal's cursor.
    return _printable(f"{event.get('ts')} {event.get('kind')!s:<18} {rest}".rstrip())
