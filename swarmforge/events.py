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
handoff bodies never go in. Reading it is eventread.py's; showing an event,
eventline.py's.
"""

from __future__ import annotations

import os

from swarmforge import fsutil, statedir, times
from swarmforge.layout import EVENTS_LOG

TYPE_CHECKING = False  # typing itself costs milliseconds on the helpers' hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    Fields = Mapping[str, object]
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
    return statedir.path(root, EVENTS_LOG)


def _text(value: str) -> str:
    if len(value) > MAX_TEXT:
        value = value[: MAX_TEXT - 3] + "..."
    return printable(value)


def printable(value: str) -> str:
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
