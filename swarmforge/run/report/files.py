"""Report files: their names by outcome, and finding the report of a task.

A worker writes `<taskId>.report.md` and renames it to `<taskId>.complete.md` or
`<taskId>.failed.md`; the rename is the commit. A `.report.md` left behind means
the worker died before it finished, and nobody reads it.
"""

from __future__ import annotations

from pathlib import Path

from swarmforge.errors import CorruptFile, SwarmforgeError

STAGED, COMPLETE, FAILED = ".report.md", ".complete.md", ".failed.md"


def reported_tasks(reports_dir: str) -> set[str]:
    """The tasks with any report file in `reports_dir`, staged or published."""
    names = [entry.name for entry in Path(reports_dir).iterdir()]
    return {
        name[: -len(suffix)]
        for name in names
        for suffix in (STAGED, COMPLETE, FAILED)
        if name.endswith(suffix)
    }


def find_report(reports_dir: str, task_id: str) -> str | None:
    """The published report of `task_id`, or None while it has none."""
    check_name(task_id)
    directory = Path(reports_dir)
    complete = directory / (task_id + COMPLETE)
    failed = directory / (task_id + FAILED)
    if complete.exists() and failed.exists():
        raise CorruptFile(str(failed), None, f"task {task_id} also has {complete.name}")
    for path in (complete, failed):
        if path.exists():
            return str(path)
    return None


def check_name(task_id: str) -> None:
    """SwarmforgeError unless `task_id` can name a report file."""
    # The id becomes a file name: nothing that could leave the reports directory.
    if not task_id or task_id in (".", "..") or any(c in task_id for c in "/\0\n"):
        raise SwarmforgeError(f"'{task_id}' cannot name a report file.")
