"""Queued files that do not read as handoffs: set aside in failed/ with their reason, and
an event each, so that they never stand in the way of the items behind them."""

from __future__ import annotations

from swarmforge import events
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import message
from swarmforge.handoff.inprocess import event_fields, project_root
from swarmforge.handoff.mailbox import Mailbox
from swarmforge.handoff.message import Handoff


def _set_aside(box: Mailbox, aside: list[SetAside]) -> None:
    """The `handoff-set-aside` events of files just set aside, naming the mailbox's role."""
    if not aside:
        return
    root = project_root(box)
    if root is None:
        return
    from swarmforge import roletable  # only for a file that did not read: off the hot path

    try:
        here = [n for n, e in roletable.read_roles(root).items() if e.path == box.worktree]
    except (SwarmforgeError, OSError):
        here = []
    role = here[0] if len(here) == 1 else ""  # roles sharing the main checkout: unknown
    fields = [event_fields(a.path, None, role=role, reason=a.reason) for a in aside]
    events.EventLog(root).emit_many(("handoff-set-aside", f) for f in fields)


class SetAside:
    """A queued file that could not be read as a handoff, moved to failed/ with its reason."""

    __slots__ = ("path", "reason")

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason

    def line(self) -> str:
        """How the helpers report it on stderr."""
        return f"SET_ASIDE: {self.path}: {self.reason}"


def readable(box: Mailbox, queued: list[str], aside: list[SetAside]) -> list[tuple[str, Handoff]]:
    """The queued files that read as handoffs; the others are set aside, never in the way."""
    found = []
    for path in queued:
        try:
            found.append((path, message.read(path)))
        except FileNotFoundError:
            continue  # taken by another claimer meanwhile
        except CorruptFile as exc:
            from swarmforge.handoff.outbox import set_aside

            aside.append(SetAside(set_aside(box, path, exc.message), exc.message))
            _set_aside(box, aside[-1:])
    return found
