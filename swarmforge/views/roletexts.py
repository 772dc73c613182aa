"""The texts a view opens on one role: its output log's end, its diff, its handoff in hand."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge import statedir
from swarmforge.git import command
from swarmforge.handoff.mailbox import items_in
from swarmforge.layout import LOGS_DIR

OUTPUT_BYTES = 64 * 1024  # of a role's log read for its last lines
DIFF_BYTES = 2 * 1024 * 1024  # of a diff shown: a view, not a patch to apply


def output(root: str, role: str, lines: int = 200) -> str:
    """The last `lines` lines of the role's output log, or a sentence saying there is none."""
    path = Path(statedir.path(root, LOGS_DIR), role + ".log")
    try:
        with path.open("rb") as log:
            log.seek(max(0, os.fstat(log.fileno()).st_size - OUTPUT_BYTES))
            data = log.read(OUTPUT_BYTES)
    except OSError:
        return f"(no output yet: {path} cannot be read)"
    return "\n".join(data.decode(errors="replace").splitlines()[-lines:])


def diff(root: str, base: str, branch: str) -> str:
    """`git diff base...branch`: its --stat, then the diff itself."""
    span = f"{base}...{branch}"
    parts = []
    for extra in (["--stat"], []):
        result = command.run(root, "diff", "--no-color", *extra, span, "--")
        if not result.ok:
            return f"(git diff {span} failed: {result.stderr.decode(errors='replace').strip()})"
        parts.append(result.stdout[:DIFF_BYTES].decode(errors="replace"))
    return "\n".join(parts).strip() or f"(no difference between {base} and {branch})"


def handoff(path: str | None) -> str:
    """The text of the item in hand: a task's file, or every file of a batch."""
    if path is None:
        return "(no item in hand)"
    files = items_in(path) if Path(path).is_dir() else [path]
    parts = []
    for item in map(Path, files):
        try:
            parts.append(f"== {item.name}\n" + item.read_bytes().decode(errors="replace"))
        except OSError as exc:
            parts.append(f"== {item.name}: cannot be read ({exc.strerror})")
    return "\n".join(parts) or "(the batch is empty)"
