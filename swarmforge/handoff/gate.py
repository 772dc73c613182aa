"""The gate (`swarm_handoff.sh <draft>`): validate a draft, stamp it, install it in the outbox."""

from __future__ import annotations

import os
import time

from swarmforge import project
from swarmforge.errors import Refused, SwarmforgeError
from swarmforge.handoff import draft as drafts
from swarmforge.handoff import sequence
from swarmforge.handoff.mailbox import Mailbox, compact_stamp, utc_stamp
from swarmforge.handoff.message import Handoff

USAGE = """Usage: swarm_handoff.sh <draft-file>

Draft formats:

type: git_handoff
to: <role>[,<role>...]
priority: NN
task: <short-stable-task-name>
commit: <10-char-commit-abbrev>

type: note
to: <role>[,<role>...]
priority: NN
message: <one line, max 80 chars>"""

MAX_NAME_BYTES = 255


class HandoffInvalid(Refused):
    """A draft the gate refuses, with every error found."""

    def __init__(self, draft: str, errors: list[str]) -> None:
        super().__init__(
            f"HANDOFF INVALID: {draft}",
            details=("", "Errors:", *(f"- {e}" for e in errors), "", USAGE),
        )
        self.errors = errors


def build(draft: drafts.Draft, sender: str, seq: str, now: float) -> tuple[str, Handoff]:
    """The file name and contents of the handoff made from a valid draft."""
    stamp = compact_stamp(now)
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
    headers.append(("created_at", utc_stamp(now)))
    name = f"{draft.priority}_{stamp}_{seq}_from_{sender}_to_{'_'.join(draft.recipients)}.handoff"
    return name, Handoff(headers, f"Re-read your role and constitution.\n\n{last_line}\n")


def queue_handoff(draft_path: str, *, cwd: str, role: str) -> str:
    """Validate the draft at `draft_path` and queue it from the worktree at `cwd`; its path."""
    path = os.path.join(cwd, draft_path)
    if not os.path.isfile(path):
        raise SwarmforgeError(f"Draft file not found: {draft_path}")
    sender = role
    if not sender:
        raise SwarmforgeError("Set SWARMFORGE_ROLE.")
    roles = project.read_roles(project.find_root(cwd))
    if sender not in roles:
        raise SwarmforgeError(f"Unknown sender role: {sender}")
    with open(path, "rb") as f:
        data = f.read()

    def resolve(commit: str) -> tuple[str | None, str | None]:
        from swarmforge.gitobjects import resolve_commit

        return resolve_commit(cwd, commit)

    draft, errors = drafts.validate(data, frozenset(roles), resolve)
    if draft is None:
        raise HandoffInvalid(draft_path, errors)
    mailbox = Mailbox(cwd)
    now = time.time()
    seq = sequence.next_sequence(mailbox.root)
    name, handoff = build(draft, sender, seq, now)
    if len(name.encode()) > MAX_NAME_BYTES:
        raise HandoffInvalid(
            draft_path,
            [
                f"Header 'to' names too many recipients for one file "
                f"name ({len(name.encode())} bytes); split the handoff."
            ],
        )
    final = mailbox.install(name, handoff)
    os.unlink(path)
    return final
