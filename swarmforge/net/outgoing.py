"""Handoffs to roles on other hosts, published on the project's JetStream stream.

The outbox file's bytes are published once per recipient on another host, with the
message id `<handoff id>:<recipient>`; only once the server has acknowledged every
publish may the caller move the original to sent/. A sender killed in between
publishes again on restart, and the server drops the repeat (same id, within the
duplicate window).

A `git_handoff`'s commit travels through the hub (hub.py): the sender pushes it before
the first publish and names its full id in a header, for the receiver (incoming.py).
"""

from __future__ import annotations

from pathlib import Path

from swarmforge import fsutil
from swarmforge.errors import CorruptFile
from swarmforge.handoff import commitcheck, message, outbox
from swarmforge.handoff.outcome import Undeliverable
from swarmforge.net import hub as hubs
from swarmforge.net.transport import Transport

NAME_HEADER = "Swarmforge-Name"  # the handoff's file name, kept by every copy
COMMIT_HEADER = "Swarmforge-Commit"  # a git_handoff's full commit id, pushed to the hub


def message_id(handoff_id: str, recipient: str) -> str:
    """The id under which the server de-duplicates one recipient's copy."""
    return f"{handoff_id}:{recipient}"


def send(
    transport: Transport,
    outbox_file: str,
    recipients: list[str],
    *,
    hub: str | None = None,
    handoff: message.Handoff | None = None,
) -> None:
    """Publish the handoff at `outbox_file` to each of `recipients` (roles on other hosts).

    `handoff`: the file as read and amended by the caller (else it is read here). With
    `hub`, a git_handoff's commit is pushed there first. Returns once the server has
    every copy; TransportError or HubError (nothing to archive yet), or Undeliverable
    (the file can never be sent) otherwise.
    """
    if handoff is None:
        data = fsutil.read_regular(outbox_file)
        try:
            handoff = message.parse(data, outbox_file)
        except CorruptFile as exc:
            raise Undeliverable(f"malformed: {exc}") from None
    handoff_id = handoff.get("id")
    if not handoff_id:
        raise Undeliverable("the handoff has no 'id' header")
    name = Path(outbox_file).name
    headers = {NAME_HEADER: name}
    commit = commitcheck.MergeChecks(handoff, name, "").commit  # only what the gate writes
    if commit and hub:
        headers[COMMIT_HEADER] = hubs.push(_worktree_of(outbox_file), hub, commit)
    data = handoff.render()
    for role in recipients:
        transport.publish(role, message_id(handoff_id, role), data, headers)


def _worktree_of(outbox_file: str) -> str:
    """The worktree whose outbox holds `outbox_file`."""
    return outbox.sender(outbox_file).worktree
