"""What `swarmforge run` reports when a run can move no further."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from swarmforge.run import ledger


def summary(
    run_id: str, run_dir: str, goal: str, states: Mapping[str, str], waiting: Iterable[str]
) -> dict[str, object]:
    """Every task's status counted, the failed and parked ones named, and the verdict."""
    counts: dict[str, int] = {}
    for status in states.values():
        counts[status] = counts.get(status, 0) + 1
    parked = ledger.parked(run_dir)
    return {
        "runId": run_id,
        "dir": run_dir,
        "goal": goal,
        "counts": counts,
        "failed": sorted(t for t, s in states.items() if s == "failed"),
        "parked": {t: parked.get(t, "manual") for t, s in states.items() if s == "parked"},
        "waiting": sorted(waiting),
        "ok": "failed" not in states.values(),
    }
