"""What `swarmforge run` reports when a run can move no further."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from swarmforge.run.parking import ledgers


@dataclass(frozen=True)
class RunSummary:
    """Every task's status counted, the failed and parked ones named, and the verdict."""

    run_id: str
    dir: str
    goal: str
    counts: dict[str, int]
    failed: list[str]
    parked: dict[str, str]  # task -> why it is parked
    waiting: list[str]  # leads waiting for parked subtasks
    ok: bool

    def as_json(self) -> dict[str, object]:
        """The summary as `swarmforge run --json` prints it."""
        return {
            "runId": self.run_id,
            "dir": self.dir,
            "goal": self.goal,
            "counts": self.counts,
            "failed": self.failed,
            "parked": self.parked,
            "waiting": self.waiting,
            "ok": self.ok,
        }


def summary(
    run_id: str, run_dir: str, goal: str, states: Mapping[str, str], waiting: Iterable[str]
) -> RunSummary:
    """The summary of a run whose tasks stand at `states`."""
    counts: dict[str, int] = {}
    for status in states.values():
        counts[status] = counts.get(status, 0) + 1
    parked = ledgers.parked(run_dir)
    return RunSummary(
        run_id=run_id,
        dir=run_dir,
        goal=goal,
        counts=counts,
        failed=sorted(t for t, s in states.items() if s == "failed"),
        parked={t: parked.get(t, "manual") for t, s in states.items() if s == "parked"},
        waiting=sorted(waiting),
        ok="failed" not in states.values(),
    )
