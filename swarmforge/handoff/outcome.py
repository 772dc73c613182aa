"""What became of one outbox file: delivered, failed, gone or held, and to whom it went."""

from __future__ import annotations

from swarmforge.handoff import message
from swarmforge.handoff.commitcheck import MergeChecks

# HELD: a recipient's mailbox is unsafe (UnsafeMailbox); the original stays in the outbox
# until it is repaired, and the other recipients have their copies meanwhile.
DELIVERED, FAILED, GONE, HELD = "delivered", "failed", "gone", "held"


class Outcome:
    """What became of one outbox file."""

    __slots__ = (
        "conflicts",
        "copied",
        "name",
        "priority",
        "published",
        "reason",
        "sender",
        "status",
        "unchecked",
    )

    def __init__(
        self,
        name: str,
        status: str,
        copied: list[str] | None = None,
        reason: str = "",
        handoff: message.Handoff | None = None,
        checks: MergeChecks | None = None,
        published: list[str] | None = None,
    ) -> None:
        self.name = name
        self.status = status
        self.copied = copied or []  # recipients that got their copy in this attempt
        self.published = published or []  # recipients on other hosts it was sent to
        self.reason = reason
        # The merge checks of those copies, for the daemon: a `merge-conflict` event's
        # fields per conflict, and a line for its log per check git could not answer.
        self.conflicts = checks.conflicts if checks else []
        self.unchecked = checks.problems if checks else []
        # From the handoff's headers, when it could be read (for the event log).
        self.sender = (handoff.get("from") or "") if handoff else ""
        self.priority = (handoff.get("priority") or "") if handoff else ""


class Undeliverable(Exception):
    """The file cannot be delivered; the message says why."""
