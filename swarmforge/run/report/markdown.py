"""The Markdown of a report: a heading, its one JSON block, and the tails of the output."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

TAIL = 64 * 1024

_BACKTICKS = re.compile(r"`+")


def render(task_id: str, payload: Mapping[str, object], ok: bool, out: bytes, err: bytes) -> str:
    """The Markdown of a report: heading, the JSON block, then the tails of stdout and stderr."""
    parts = [
        f"# Task {task_id}: {'complete' if ok else 'failed'}\n",
        "```json\n" + _json(payload) + "\n```\n",
    ]
    for name, stream in (("stdout", out), ("stderr", err)):
        parts.append(_section(name, stream) if stream else _EMPTY[name])
    return "\n".join(parts)


def _section(name: str, stream: bytes) -> str:
    text, heading = _tail(stream), f"## {name}"
    if len(stream) > TAIL:
        heading += f" (last {TAIL} of {len(stream)} bytes)"
    # A fence longer than any run of backticks in the text: nothing inside can close it.
    fence = "`" * max(3, 1 + max(map(len, _BACKTICKS.findall(text)), default=0))
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{heading}\n\n{fence}text\n{body}{fence}\n"


def _json(payload: Mapping[str, object]) -> str:
    """One top-level field per line, each value in compact JSON.

    `json.dumps(indent=...)` falls back to the pure-Python encoder, which cost more
    than the rest of a short task's report put together.
    """
    if not payload:
        return "{}"
    if not all(isinstance(key, str) for key in payload):
        raise TypeError("report fields must be named by strings")
    fields = (f"  {_string(key)}: {_value(value)}" for key, value in payload.items())
    return "{\n" + ",\n".join(fields) + "\n}"


# One encoder for every field: json.dumps with options builds a new one per call.
_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": ")).encode
_string = json.encoder.encode_basestring
_SCALARS = {True: "true", False: "false", None: "null"}


def _value(value: object) -> str:
    """`_dumps(value)`, with the encoder's own set-up skipped for what a report holds most."""
    if value is None or isinstance(value, bool):
        return _SCALARS[value]
    if type(value) is str:
        return _string(value)
    if type(value) is int:
        return int.__repr__(value)  # as json does
    return _dumps(value)


def _tail(stream: bytes) -> str:
    tail = stream[-TAIL:]
    if len(stream) > TAIL:
        # Start on a character boundary rather than in the middle of a UTF-8 sequence.
        tail = tail[next((i for i, b in enumerate(tail[:4]) if b & 0xC0 != 0x80), 0) :]
    return tail.decode("utf-8", errors="replace")


_EMPTY = {name: _section(name, b"") for name in ("stdout", "stderr")}
