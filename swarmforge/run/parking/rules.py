"""Parking rules: which tasks wait for a human, and why.

The first row that matches decides why a task is parked:

=====  ===================================  ==============
 step  condition                            reason
=====  ===================================  ==============
 1     ``metadata["legal"] is True``        ``legal``
 2     ``metadata["security"] is True``     ``security``
 3     ``metadata["irreversible"] is True`` ``irreversible``
 4     the ``irreversible`` flag            ``irreversible``
 5     ``tier == "T4"``                     ``tier-t4``
 -     otherwise                            not parked
=====  ===================================  ==============

Only the boolean ``true`` counts in metadata: ``"true"``, ``1`` or ``"yes"`` do not.
A spec never gets that far with them: validation refuses a non-boolean value for these
keys, so a misspelt ``true`` is an error rather than a task that runs unattended.
``manual`` is the reason of a task a human parked by hand; no rule here produces it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol, get_args

ParkReason = Literal["tier-t4", "irreversible", "legal", "security", "manual"]
REASONS: tuple[ParkReason, ...] = get_args(ParkReason)
METADATA_KEYS: tuple[ParkReason, ...] = ("legal", "security", "irreversible")  # by precedence


class Parkable(Protocol):
    """What park classification reads from a task (TaskSpec and SubtaskSpec have it)."""

    @property
    def metadata(self) -> Mapping[str, Any]: ...

    @property
    def irreversible(self) -> bool: ...

    @property
    def tier(self) -> str: ...


class ParkableTask(Parkable, Protocol):
    """A task that park classification reads, with its id."""

    @property
    def id(self) -> str: ...


def park_reason(task: Parkable) -> ParkReason | None:
    """Why `task` must wait for approval (one of REASONS), or None when it may run."""
    for key in METADATA_KEYS:
        if task.metadata.get(key) is True:
            return key
    if task.irreversible:
        return "irreversible"
    if task.tier == "T4":
        return "tier-t4"
    return None


def waiting(tasks: Iterable[ParkableTask], approved: set[str]) -> dict[str, ParkReason]:
    """The tasks among `tasks` that wait for a decision, with the reason they are parked."""
    found: dict[str, ParkReason] = {}
    for task in tasks:
        reason = park_reason(task)
        if reason is not None and task.id not in approved:
            found[task.id] = reason
    return found
