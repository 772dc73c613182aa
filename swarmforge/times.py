"""Ages as people read them in a table or a status line: 45s, 12m, 3h, 2d."""

from __future__ import annotations


def duration(seconds: int | None) -> str:
    """`seconds` as a short age: 45s, 12m, 3h, 2d; `-` when unknown."""
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"
