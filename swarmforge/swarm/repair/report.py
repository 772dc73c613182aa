"""What a repair did with each stuck item, and the report of one whole repair."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

# What a repair did (or, dry, would do) with one item.
REQUEUED = "requeued"  # back in inbox/new


COMPLETED = "completed"  # it was finished already: moved to completed/


LEFT = "left"  # left where it is, for the reason in `problem`


@dataclass(frozen=True)
class Repair:
    """One item repair found stuck, why, and where it went (or would go)."""

    role: str
    file: str  # where the item was
    reason: str  # why it counts as stuck: no swarm running, agent gone or exited, its age
    action: str  # REQUEUED, COMPLETED or LEFT
    destination: str | None = None
    requeue_count: int | None = None
    problem: str | None = None  # why it was left

    def as_json(self) -> dict[str, object]:
        return asdict(self)

    def line(self, dry_run: bool) -> str:
        """The item as one line of the command's report."""
        head = f"{self.role}: {Path(self.file).name} ({self.reason}): "
        if self.action == LEFT:
            return head + f"left in place: {self.problem}"
        verb = {REQUEUED: "requeued", COMPLETED: "moved to completed"}[self.action]
        verb = f"would be {verb}" if dry_run else verb
        count = f", requeue_count {self.requeue_count}" if self.requeue_count else ""
        return head + f"{verb}: {self.destination}{count}"


@dataclass(frozen=True)
class RepairReport:
    """Everything one repair found, and whether it could all be repaired."""

    project: str
    dry_run: bool
    older_than: str | None
    repairs: list[Repair]
    captures_failed: list[str] = field(default_factory=list)  # roles whose work was not captured

    @property
    def ok(self) -> bool:
        """True if nothing was left in place."""
        return all(r.action != LEFT for r in self.repairs)

    def as_json(self) -> dict[str, object]:
        return {
            "project": self.project,
            "dry_run": self.dry_run,
            "older_than": self.older_than,
            "ok": self.ok,
            "repairs": [r.as_json() for r in self.repairs],
            "captures_failed": self.captures_failed,
        }
