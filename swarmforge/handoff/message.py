"""The one strict parser and renderer of handoff files (and the header block of drafts).

A handoff is UTF-8 text: `field: value` header lines, one empty line, then an
opaque body. Only the standard library is used here: the agent-facing helpers
import this module on every call.
"""

from __future__ import annotations

from swarmforge import fsutil
from swarmforge.errors import CorruptFile
from swarmforge.text import has_control

FIELD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
RESERVED = (
    "id",
    "from",
    "role",
    "recipient",
    "created_at",
    "enqueued_at",
    "dequeued_at",
    "completed_at",
    "warning",
    "merge_check",
    "merge_conflicts",
    "requeued_at",
    "requeue_count",
)


def line_problem(line: str) -> str | None:
    """Why `line` is not a well-formed `field: value` header line, or None if it is."""
    field, sep, value = line.partition(": ")
    if not sep:
        return "expected 'field: value'."
    if not field or not value:
        return "field and value must both be non-empty."
    if not all(c in FIELD_CHARS for c in field):
        return f"header name '{field}' may hold only letters, digits, '_' and '-'."
    if has_control(value):
        return "header values may not contain control characters."
    return None


class Handoff:
    """A parsed handoff: ordered headers and a verbatim body."""

    __slots__ = ("body", "headers")

    def __init__(self, headers: list[tuple[str, str]], body: str = "") -> None:
        self.headers = headers
        self.body = body

    def get(self, field: str, default: str | None = None) -> str | None:
        """The value of header `field`, or `default`."""
        for name, value in self.headers:
            if name == field:
                return value
        return default

    def with_header(self, field: str, value: str) -> Handoff:
        """A copy with `field` set: replaced where it stands, else appended to the header block."""
        if has_control(value) or "\n" in value:
            raise ValueError(f"header value for {field!r} must be one line")
        headers = [(n, value if n == field else v) for n, v in self.headers]
        if all(n != field for n, _ in self.headers):
            headers.append((field, value))
        return Handoff(headers, self.body)

    def render(self) -> bytes:
        """The file contents of this handoff."""
        head = "".join(f"{name}: {value}\n" for name, value in self.headers)
        return (head + "\n" + self.body).encode("utf-8")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Handoff) and self.headers == other.headers and self.body == other.body
        )

    def __repr__(self) -> str:
        return f"Handoff({self.headers!r}, {self.body!r})"


def parse(data: bytes, path: str) -> Handoff:
    """Parse handoff bytes read from `path`; CorruptFile names the file and line at fault."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = data[: exc.start].count(b"\n") + 1
        raise CorruptFile(path, bad_line, "not valid UTF-8", refused=True) from None
    headers: list[tuple[str, str]] = []
    seen: set[str] = set()
    pos = 0
    number = 0
    while pos < len(text):
        end = text.find("\n", pos)
        if end < 0:
            end = len(text)
        line = text[pos:end]
        pos = end + 1
        number += 1
        if line == "":
            return Handoff(headers, text[pos:])
        problem = line_problem(line)
        if problem:
            raise CorruptFile(path, number, problem.rstrip("."), refused=True)
        field, _, value = line.partition(": ")
        if field in seen:
            raise CorruptFile(path, number, f"duplicate header '{field}'", refused=True)
        seen.add(field)
        headers.append((field, value))
    return Handoff(headers, "")


def read(path: str) -> Handoff:
    """Read and parse the handoff file at `path` (fsutil.NotRegularFile if it is not a file)."""
    return parse(fsutil.read_regular(path), path)
