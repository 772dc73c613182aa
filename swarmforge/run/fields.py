"""Field types the records of a run share: the UTC timestamp and the task id."""

from __future__ import annotations

import time
from typing import Annotated

from pydantic import StringConstraints

from swarmforge import times

Stamp = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")]
TaskId = Annotated[str, StringConstraints(min_length=1)]

_second: tuple[int, str] = (-1, "")


def utc_stamp(now: float | None = None) -> str:
    """An ISO-8601 UTC instant with milliseconds (2026-06-15T14:05:31.123Z)."""
    global _second
    now = time.time() if now is None else now
    whole = int(now // 1)
    if _second[0] != whole:
        # strftime costs more than the rest of a journal event; a run stamps thousands
        # of events a second, so the seconds part is made once per second.
        _second = (whole, times.stamp(whole).removesuffix("Z"))
    return f"{_second[1]}.{int(now % 1 * 1000):03d}Z"
