"""Attempts: which try of a task a worker on another host was given, as the journal says.

A task that goes to a worker is claimed with a new attempt: `attempt:<n>` is the
reason of its `running` state.
"""

from __future__ import annotations

from collections.abc import Sequence

from swarmforge.run.journal.events import Event, TaskState

ATTEMPT = "attempt:"


def attempt_of(reason: str | None) -> int | None:
    """The attempt a `running` state's reason names, if it names one."""
    if reason and reason.startswith(ATTEMPT) and reason[len(ATTEMPT) :].isdigit():
        return int(reason[len(ATTEMPT) :])
    return None


def running_attempt(events: Sequence[Event], task_id: str) -> int | None:
    """The attempt of task `task_id`'s last `running` state, if it went to a worker."""
    for event in reversed(events):
        if isinstance(event, TaskState) and event.id == task_id and event.status == "running":
            return attempt_of(event.reason)
    return None
