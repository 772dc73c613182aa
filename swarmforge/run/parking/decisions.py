"""What the decisions of humans on parked tasks mean for a level: which may run, which fail."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Decision:
    """A human's word on a parked task: it may run (`approved`) or fails for good."""

    task_id: str
    verdict: Literal["approved", "rejected"]


def decisions(
    statuses: Mapping[str, str], approved: set[str], rejected: set[str]
) -> list[Decision]:
    """The decisions to carry out on the parked tasks among `statuses`, in their order."""
    found = []
    for task_id, status in statuses.items():
        if status != "parked":
            continue
        if task_id in rejected:
            found.append(Decision(task_id, "rejected"))
        elif task_id in approved:
            found.append(Decision(task_id, "approved"))
    return found
