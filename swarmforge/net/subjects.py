"""The project's names on the NATS server: its id, its stream, each role's subject and
durable consumer.

The project's name on the server must be the same on every host, whose paths differ:
it is `[transport] project` when given, otherwise a hash of the hub's URL, which every
host already shares (they all push to and fetch from it).
"""

from __future__ import annotations

import hashlib
import re

from swarmforge.config.transportsettings import TransportSettings

SUBJECT_ROOT = "swarmforge"
PLAIN_TOKEN = re.compile(r"[A-Za-z0-9-]+")


def project_id(settings: TransportSettings) -> str:
    """The project's name on the server: `project`, or a short hash of the hub's URL."""
    if settings.project is not None:
        return settings.project
    hub = (settings.hub or "").rstrip("/")
    return hashlib.sha256(hub.encode("utf-8")).hexdigest()[:16]


def token(name: str) -> str:
    """`name` as one token of a subject or a consumer name.

    A role name may hold `*` or `>`, wildcards in a subject: any name with more than
    letters, digits and `-` is written as `=` and its UTF-8 in hex, which no plain
    name can be, so two roles never share a token.
    """
    if PLAIN_TOKEN.fullmatch(name):
        return name
    return "=" + name.encode("utf-8").hex()


def stream_name(project: str) -> str:
    """The project's stream."""
    return f"SWARMFORGE-{project}"


def subject(project: str, role: str) -> str:
    """The subject of `role`'s mail."""
    return f"{SUBJECT_ROOT}.{project}.role.{token(role)}"


def consumer_name(project: str, role: str) -> str:
    """The durable consumer through which `role` takes its mail."""
    return f"{project}-{token(role)}"
