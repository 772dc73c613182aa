"""Mail for the roles of other hosts when the project has no way to them: it waits in the outbox."""

from __future__ import annotations

from collections.abc import Mapping

from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import message


class Stranded:
    """The way to other hosts' roles when there is none: their mail waits in the outbox."""

    def __init__(self, remote: Mapping[str, str], why: str) -> None:
        self.roles = remote
        self.why = why

    def send(self, path: str, handoff: message.Handoff, recipients: list[str]) -> None:
        raise SwarmforgeError(f"{', '.join(recipients)} run on another host and {self.why}")
