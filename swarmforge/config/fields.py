"""Values the tables of swarmforge.toml check alike: durations, and paths inside the project."""

from __future__ import annotations

import json
import re
from pathlib import Path

DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def duration_seconds(text: str) -> float:
    """Seconds of a duration such as `15m`, `90s` or `1h30m`; ValueError naming the value."""
    match = DURATION.fullmatch(text.strip())
    if not text.strip() or match is None:
        raise ValueError(f"'{text}' is not a duration: write it like 90s, 15m or 1h30m")
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise ValueError(f"'{text}' is not a duration longer than zero")
    return float(total)


def inside_project(pattern: str) -> str:
    """A path pattern that stays inside the project: relative, without `..`."""
    parts = pattern.split("/")
    if not pattern.strip() or Path(pattern).is_absolute() or ".." in parts:
        raise ValueError(
            f"{json.dumps(pattern)} is not a path inside the project: write it relative to "
            "the project, without '..', such as .env or config/*.local.yml"
        )
    return pattern
