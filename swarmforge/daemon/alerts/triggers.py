"""Which notification an event fires: the triggers `[notify] on` names, and what a command gets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

STATES = ("waiting", "stalled", "exited")

Event = Mapping[str, object]


def trigger_of(event: Event, chosen: Iterable[str]) -> str | None:
    """The chosen trigger `event` fires, or None."""
    kind = event.get("kind")
    for name in chosen:
        if name in STATES:
            if kind == "agent-state" and event.get("state") == name:
                return name
            if name == "exited" and kind == "agent-exited":
                return name
        elif kind == name:
            return name
    return None


def payload(trigger: str, events: list[Event]) -> dict[str, object]:
    """What the command gets on stdin: the event itself, or for a burst, all of them."""
    if len(events) == 1:
        return {"trigger": trigger, **events[0]}
    return {"trigger": trigger, "count": len(events), "events": events}
