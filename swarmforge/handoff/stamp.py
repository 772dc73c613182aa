"""The handoff the gate makes of a valid draft: its file name, id, headers and body."""

from __future__ import annotations

from swarmforge import times
from swarmforge.handoff.draft import Draft
from swarmforge.handoff.message import Handoff


def build(draft: Draft, sender: str, seq: str, now: float) -> tuple[str, Handoff]:
    """The file name and contents of the handoff made from a valid draft."""
    stamp = times.compact(now)
    headers = [
        ("id", f"{stamp}_{seq}_from_{sender}"),
        ("from", sender),
        ("to", ",".join(draft.recipients)),
        ("priority", draft.priority),
        ("type", draft.type),
    ]
    if draft.type == "git_handoff":
        headers += [("role", sender), ("task", draft.task), ("commit", draft.commit)]
        last_line = f"merge_and_process {sender} {draft.commit}"
    else:
        headers.append(("message", draft.message))
        last_line = draft.message
    headers.append(("created_at", times.stamp(now)))
    name = f"{draft.priority}_{stamp}_{seq}_from_{sender}_to_{'_'.join(draft.recipients)}.handoff"
    return name, Handoff(headers, f"Re-read your role and constitution.\n\n{last_line}\n")
