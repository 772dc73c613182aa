"""The exact text the receive helpers print for a task, a batch, or a completion, and the
path lists of their refusals."""

from __future__ import annotations

from swarmforge.handoff.message import Handoff


class Task:
    """An item in process: its absolute path and its parsed contents."""

    __slots__ = ("handoff", "path")

    def __init__(self, path: str, handoff: Handoff) -> None:
        self.path = path
        self.handoff = handoff

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view."""
        return {"path": self.path, "headers": dict(self.handoff.headers), "body": self.handoff.body}


class Batch:
    """A batch in process: its directory and its items in name order."""

    __slots__ = ("items", "path")

    def __init__(self, path: str, items: list[Task]) -> None:
        self.path = path
        self.items = items

    @property
    def priority(self) -> str:
        """The batch's priority: that of its first item."""
        return self.items[0].handoff.get("priority") or "50"

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view."""
        return {
            "path": self.path,
            "priority": self.priority,
            "items": [item.as_dict() for item in self.items],
        }


def task_text(task: Task) -> str:
    """The task printout."""
    h = task.handoff
    lines = [
        f"TASK: {task.path}",
        f"FROM: {h.get('from') or 'unknown'}",
        f"TYPE: {h.get('type') or 'unknown'}",
        f"PRIORITY: {h.get('priority') or '50'}",
    ]
    name = h.get("task")
    if name:
        lines.append(f"TASK_NAME: {name}")
    warning = h.get("warning")
    if warning:
        lines.append(f"WARNING: {warning}")
    check = merge_check_text(h)
    if check:
        lines.append(f"MERGE CHECK: {check}")
    lines.append("PAYLOAD:")
    body = h.body
    if body and not body.endswith("\n"):
        body += "\n"
    return "\n".join(lines) + "\n" + body


def merge_check_text(h: Handoff) -> str | None:
    """What the daemon found merging the commit into the recipient's branch, in words.

    None when the copy carries no result (a note, or a check git could not answer).
    """
    status = h.get("merge_check")
    if status == "conflict":
        return f"conflict in {h.get('merge_conflicts') or 'unnamed paths'}"
    if status == "missing-commit":
        return f"commit {h.get('commit') or '(none)'} is not in the repository"
    return status  # "clean", or a value of a newer swarmforge, shown as it is


def batch_text(batch: Batch) -> str:
    """The batch printout."""
    parts = [f"BATCH: {batch.path}\nCOUNT: {len(batch.items)}\nPRIORITY: {batch.priority}\n"]
    for index, item in enumerate(batch.items, start=1):
        parts.append(f"\nBATCH_ITEM: {index}\n{task_text(item)}")
    return "".join(parts)


def listing(paths: list[str]) -> tuple[str, ...]:
    return tuple(f"- {p}" for p in paths)
