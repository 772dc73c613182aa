"""The durable consumers through which this host's roles take their mail from the NATS server.

Each must take its role's own mail, with explicit acknowledgement: anything else loses
or mixes mail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.doctor.check import Check

if TYPE_CHECKING:
    from swarmforge.net.transport import Transport


def check_consumers(client: Transport, record: SessionRecord | None) -> Check:
    """The durable consumers of this host's roles, where they exist, take each role's own
    mail with explicit acknowledgement (anything else loses or mixes mail)."""
    from nats.js import api
    from nats.js.errors import NotFoundError

    from swarmforge.net.subjects import consumer_name, stream_name, subject

    if record is None or not record.roles:
        return Check("consumers", "ok", "no roles run on this host")
    stream = stream_name(client.project)
    problems, made = [], 0
    for role in record.roles:
        durable = consumer_name(client.project, role.name)

        async def look(durable: str = durable) -> api.ConsumerInfo | None:
            try:
                found: api.ConsumerInfo = await client.js.consumer_info(stream, durable)
            except NotFoundError:
                return None  # not made yet, or no stream yet
            return found

        info = client.call(look(), f"look up the consumer {durable}")
        if info is None:
            continue
        made += 1
        config, want = info.config, subject(client.project, role.name)
        if config.ack_policy != api.AckPolicy.EXPLICIT:
            problems.append(f"{durable}: ack policy {config.ack_policy}, expected explicit")
        if config.filter_subject != want:
            problems.append(f"{durable}: filter subject {config.filter_subject}, expected {want}")
    if problems:
        fix = f"remove it (nats consumer rm {stream} NAME): the daemon makes it again as expected"
        return Check("consumers", "FAIL", "; ".join(problems), fix)
    waiting = len(record.roles) - made
    later = f", {waiting} not made yet (made when mail first comes)" if waiting else ""
    return Check("consumers", "ok", f"{made} consumer(s) of this host's roles as expected{later}")
