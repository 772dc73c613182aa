"""How a task's worker ended, and finding that again in the task's published report."""

from __future__ import annotations

from swarmforge.run.report.files import find_report
from swarmforge.run.report.parse import read_report


class Outcome:
    """How a task's worker ended."""

    __slots__ = ("exit_code", "ok", "report", "task_id")

    def __init__(self, task_id: str, ok: bool, exit_code: int | None, path: str | None) -> None:
        self.task_id = task_id
        self.ok = ok
        self.exit_code = exit_code
        self.report = path


def finished(reports: str, task_id: str) -> Outcome | None:
    """The outcome of a task whose report is written, or None while it is not."""
    path = find_report(reports, task_id)
    if path is None:
        return None
    found = read_report(path)
    return Outcome(task_id, found.ok, found.exitCode, path)
