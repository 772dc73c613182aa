"""What goes wrong between swarmforge and the NATS server: `TransportError`, and what
nats-py or the network raised, said in one plain line."""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError


class TransportError(SwarmforgeError):
    """The NATS server could not be reached or did not do what was asked; the message
    says which in one line."""


def describe(exc: BaseException) -> str:
    """One plain line for what nats-py or the network raised."""
    text = str(exc)
    if "Authorization Violation" in text or "Authentication" in text:
        return "the server refused the login (wrong user, password or credentials)"
    if isinstance(exc, ConnectionRefusedError):
        return "nothing listens there (connection refused)"
    if isinstance(exc, OSError):
        return exc.strerror or text
    return text.removeprefix("nats: ") or type(exc).__name__
