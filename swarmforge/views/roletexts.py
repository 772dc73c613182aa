"""The texts a view opens on one role: its output as a screen, its diff, its handoff in hand."""

from __future__ import annotations

from pathlib import Path

from swarmforge import fsutil, statedir
from swarmforge.git import command
from swarmforge.handoff.mailbox import items_in
from swarmforge.layout import LOGS_DIR
from swarmforge.views.terminal import screen_lines

OUTPUT_BYTES = 32 * 1024  # of a role's log read for its last lines
DIFF_BYTES = 2 * 1024 * 1024  # of a diff shown: a view, not a patch to apply
HANDOFF_BYTES = 1024 * 1024  # of a handoff shown: far above what the gate lets through


def output(root: str, role: str, lines: int = 200) -> str:
    """The last `lines` lines of the screen the role's output log drew, as a person saw it
    (escape sequences played, not shown), or a sentence saying there is none."""
    path = Path(statedir.path(root, LOGS_DIR), role + ".log")
    try:
        start, data = fsutil.read_end(str(path), OUTPUT_BYTES)
    except fsutil.NotRegularFile as exc:
        return f"(no output shown: {path} is {exc.kind}, not a regular file)"
    except OSError:
        return f"(no output yet: {path} cannot be read)"
    if start > 0:  # begun mid-line, maybe mid-sequence: from the first whole line on
        data = data[data.find(b"\n") + 1 :]
    return "\n".join(screen_lines(data, lines))


def diff(root: str, base: str, branch: str, limit: int = DIFF_BYTES) -> str:
    """`git diff base...branch`: its --stat, then the diff itself, `limit` bytes at most.

    git's output is read only up to the limit: a longer diff ends at its last whole line
    within it, followed by a line that says it was cut.
    """
    span = f"{base}...{branch}"
    parts = []
    left = limit
    for extra in (["--stat"], []):
        result = command.run(root, "diff", "--no-color", *extra, span, "--", limit=left)
        if result.cut:
            whole = result.stdout[: result.stdout.rfind(b"\n") + 1].decode(errors="replace")
            parts.append(f"{whole}… cut at {limit:,} bytes: `git diff {span}` shows the rest")
            break
        if not result.ok:
            return f"(git diff {span} failed: {result.stderr.decode(errors='replace').strip()})"
        parts.append(result.stdout.decode(errors="replace"))
        left -= len(result.stdout)
    return "\n".join(parts).strip() or f"(no difference between {base} and {branch})"


def handoff(path: str | None) -> str:
    """The text of the item in hand: a task's file, or every file of a batch."""
    if path is None:
        return "(no item in hand)"
    files = items_in(path) if Path(path).is_dir() else [path]
    parts = []
    for item in map(Path, files):
        try:
            data = fsutil.read_regular(str(item), limit=HANDOFF_BYTES)
            parts.append(f"== {item.name}\n" + data.decode(errors="replace"))
        except OSError as exc:
            parts.append(f"== {item.name}: cannot be read ({exc.strerror})")
    return "\n".join(parts) or "(the batch is empty)"
