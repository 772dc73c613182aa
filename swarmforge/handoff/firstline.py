"""One-line headers made from free text (`swarmforge send`, a run's role task): a note's
`message`, a git_handoff's `task`."""

from __future__ import annotations

from swarmforge.handoff.draft import MAX_LINE
from swarmforge.text import has_control

ELLIPSIS = "\u2026"
TASK_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _first_line(text: str) -> str:
    """The first line of `text` holding more than blanks, as one clean line."""
    for line in text.splitlines():
        clean = " ".join("".join(" " if has_control(c) else c for c in line).split())
        if clean:
            return clean
    return ""


def summary(text: str) -> str:
    """A note's `message` for `text`: its first line, cut to 80 characters with an ellipsis."""
    line = _first_line(text)
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + ELLIPSIS


def task_name(text: str) -> str:
    """A git_handoff's `task` for `text`: its first line as a short slug (`fix-the-login-bug`)."""
    slug = "".join(c if c in TASK_CHARS else "-" for c in _first_line(text).lower())
    return "-".join(part for part in slug.split("-") if part)[:MAX_LINE].strip("-") or "task"
