"""The gate: validate a handoff, stamp it, install it in an outbox.

Agents reach it with a draft (`swarm_handoff.sh <draft>`); the person running the
swarm reaches it with `swarmforge send` (fromuser.py). The draft file's own handling
is draftfile.py, the rules its fields must keep draft.py; the handoff made of a valid
draft (`build`) is stamped here.
"""

from __future__ import annotations

import os
import time

from swarmforge import events, filewrite, projectroot, roletable, times
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import sequence
from swarmforge.handoff.draft import USAGE, Draft, HandoffInvalid, validate
from swarmforge.handoff.draftfile import check_draft_file, claim, read_draft, unclaim
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.message import Handoff
from swarmforge.handoff.outbox import install

TYPE_CHECKING = False  # typing itself costs milliseconds on the helpers' hot path
if TYPE_CHECKING:
    from swarmforge.handoff.draft import CommitResolver

# A file name has at most 255 bytes, and the temporary names a handoff is written
# under (filewrite.temp_name) are longer than its own.
MAX_NAME_BYTES = 255 - filewrite.TEMP_NAME_EXTRA
USER = "user"  # the sender of `swarmforge send`: the person running the swarm, never a role


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


def queue_handoff(draft_path: str, *, cwd: str, role: str) -> str:
    """Validate the draft at `draft_path` and queue it from the worktree at `cwd`; its path."""
    path = os.path.join(cwd, draft_path)
    check_draft_file(path, draft_path)
    sender = role
    if not sender:
        raise SwarmforgeError("Set SWARMFORGE_ROLE.")
    root = projectroot.find_root(cwd)
    roles = roletable.read_roles(root)
    if sender not in roles:
        raise SwarmforgeError(f"Unknown sender role: {sender}")
    if sender == USER:
        # Handoffs from `user` are the person's own (swarmforge send); no agent speaks for them.
        raise SwarmforgeError(f"Sender role '{USER}' is reserved for swarmforge send.")
    claimed = claim(path, draft_path)
    try:
        data = read_draft(claimed, draft_path)
        draft, errors = validate(data, frozenset(roles), commit_resolver(cwd))
        if draft is None:
            raise HandoffInvalid(draft_path, errors)
        final, _ = queue_draft(root, Mailbox(cwd), draft, sender, draft_path, USAGE)
    except BaseException:
        unclaim(claimed, path)
        raise
    os.unlink(claimed)
    return final


def commit_resolver(cwd: str) -> CommitResolver:
    def resolve(commit: str) -> tuple[str | None, str | None]:
        """(canonical 10-character abbreviation, None), or (None, the gate's error)."""
        from swarmforge.git.command import GitFailed
        from swarmforge.git.objects import NOTHING, lookup

        try:
            found = lookup(cwd, commit, abbreviation=True)
        except GitFailed:
            found = NOTHING  # no repository to look in: no object matches
        if found.oid is None:
            return None, (
                "Header 'commit' must resolve to exactly one Git object; "
                f"'{commit}' matched {found.matches}."
            )
        if found.kind != "commit":
            return None, (
                f"Header 'commit' must resolve to a commit; '{commit}' resolves to '{found.kind}'."
            )
        return found.oid[:10], None

    return resolve


def queue_draft(
    root: str,
    mailbox: Mailbox,
    draft: Draft,
    sender: str,
    label: str,
    usage: str,
    extra: str = "",
) -> tuple[str, Handoff]:
    """Stamp a valid draft from `sender`, with `extra` after the generated body, and queue it
    (a `handoff-queued` event in the log of the project at `root`)."""
    # Before the sequence counter is written in the mailbox root: a mailbox directory that
    # a commit turned into a symbolic link is refused, never written through.
    mailbox.ensure(Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED)
    now = time.time()
    seq = sequence.next_sequence(mailbox.root)
    name, handoff = build(draft, sender, seq, now)
    if len(name.encode()) > MAX_NAME_BYTES:
        raise HandoffInvalid(
            label,
            [
                f"Header 'to' names too many recipients for one file "
                f"name ({len(name.encode())} bytes); split the handoff."
            ],
            usage,
        )
    if extra:
        handoff = Handoff(handoff.headers, f"{handoff.body}\n{extra}")
    final = install(mailbox, name, handoff)
    queued = {"name": name, "from": sender, "to": ",".join(draft.recipients)}
    queued.update(priority=draft.priority, type=draft.type, task=draft.task, commit=draft.commit)
    events.emit(root, "handoff-queued", {k: v for k, v in queued.items() if v})
    return final, handoff
