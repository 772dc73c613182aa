"""Handoff file names: the one format the gate makes, and what keeps a name from it."""

from __future__ import annotations

from swarmforge.handoff.mailbox import SUFFIX

NAME_FORMAT = "<PP>_<YYYYMMDDTHHMMSSZ>_<NNNNNN>_from_<sender>_to_<r1>_<r2>....handoff"


def name_problem(name: str) -> str | None:
    """What keeps `name` from being a handoff file name the gate makes (NAME_FORMAT), or None."""
    parts = name[: -len(SUFFIX)].split("_") if name.endswith(SUFFIX) else []
    if len(parts) < 7 or parts[3] != "from" or parts[5] != "to":
        return "fields missing or misplaced"
    priority, stamp, seq = parts[:3]
    if not (len(priority) == 2 and _digits(priority)):
        return "no two-digit priority"
    if not (
        len(stamp) == 16
        and _digits(stamp[:8])
        and stamp[8] == "T"
        and _digits(stamp[9:15])
        and stamp[15] == "Z"
    ):
        return "no YYYYMMDDTHHMMSSZ timestamp"
    if not (len(seq) >= 6 and _digits(seq)):
        return "no six-digit sequence number"
    for role in (parts[4], *parts[6:]):
        if not role or "/" in role or not role.isprintable() or any(c.isspace() for c in role):
            return "an empty role name, or one with spaces or control characters"
    return None


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
