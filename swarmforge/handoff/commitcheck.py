"""What a copy says of a git_handoff's commit: whether it merges cleanly into the
recipient's branch, and a warning when it would merge swarmforge's own state.

Each copy's merge check is made against that recipient's branch
(swarmforge/git/mergecheck.py): a check that git cannot answer leaves the copy
without the result, never holds it.
"""

from __future__ import annotations

from swarmforge import text
from swarmforge.git import mergecheck
from swarmforge.git.objects import state_dirs_in
from swarmforge.handoff import message
from swarmforge.handoff.draft import HEX
from swarmforge.handoff.outbox import sender
from swarmforge.roletable import RoleEntry


def unchecked(handoff: message.Handoff) -> message.Handoff:
    """`handoff` without merge-check headers: only the daemon writes them, on each copy.

    The gate refuses them in a draft, but a file put in an outbox by hand bypasses
    the gate; a result it forged must not survive a check that git cannot answer.
    """
    if all(field not in mergecheck.HEADERS for field, _ in handoff.headers):
        return handoff
    kept = [(f, v) for f, v in handoff.headers if f not in mergecheck.HEADERS]
    return message.Handoff(kept, handoff.body)


class MergeChecks:
    """The merge checks of one handoff's commit, one per recipient's branch.

    The commit is looked up once, the first time a recipient needs it; each
    recipient's own branch is then merged with it in memory (mergecheck.against).
    What git could not answer is said once, and only for a copy that went out: a
    file held in the outbox is checked again on every pass.
    """

    def __init__(self, handoff: message.Handoff, name: str, sender: str) -> None:
        commit = handoff.get("commit") or ""
        # Only what the gate writes is looked up: never a value git could read as an option.
        wanted = handoff.get("type") == "git_handoff" and commit and all(c in HEX for c in commit)
        self.commit = commit if wanted else ""
        self.name = text.shown(name)
        self.sender = handoff.get("from") or ""
        self.worktree = sender  # where the commit is looked up: the repository is shared
        self.oid: str | None = None
        self.looked_up = False
        self.lookup_failed = ""  # why the commit could not be looked up
        self.skipped: dict[str, str] = {}  # role -> why its branch could not be checked
        self.conflicts: list[dict[str, object]] = []
        self.problems: list[str] = []

    def against(self, role: str, entry: RoleEntry) -> mergecheck.MergeCheck | None:
        """The result for `role`'s copy, or None when there is none to give."""
        if not self.commit or self.lookup_failed:
            return None
        try:
            if not self.looked_up:
                self.looked_up = True
                self.oid = mergecheck.resolve(self.worktree, self.commit)
        except mergecheck.CheckFailed as exc:
            self.lookup_failed = str(exc)
            return None
        if self.oid is None:
            return mergecheck.MergeCheck(mergecheck.MISSING, self.commit)
        try:
            return mergecheck.against(entry.path, self.oid, self.commit)
        except mergecheck.CheckFailed as exc:
            self.skipped[role] = str(exc)
            return None

    def delivered(self, role: str, check: mergecheck.MergeCheck | None) -> None:
        """Note that `role`'s copy went out with `check`: a conflict is an event, a gap a line."""
        if self.lookup_failed:
            self.problems[:] = [f"merge check of {self.name} skipped: {self.lookup_failed}"]
        elif role in self.skipped:
            self.problems.append(
                f"merge check of {self.name} for {role} skipped: {self.skipped[role]}"
            )
        if check is None or check.status != mergecheck.CONFLICT:
            return
        self.conflicts.append(
            {
                "name": self.name,
                "role": role,
                "from": self.sender or None,
                "commit": check.commit,
                "paths": check.paths[: mergecheck.MAX_LISTED],
                "count": len(check.paths),
            }
        )


def flagged(handoff: message.Handoff, path: str) -> message.Handoff:
    """`handoff` with a `warning` if its commit would merge swarmforge's own state.

    `.swarmforge/` and `.worktrees/` are only git-ignored: a commit can still add them,
    and merging one would replace the recipient's mailboxes with the sender's files.
    """
    commit = handoff.get("commit") or ""
    # Only what the gate writes is looked up: never a value git could read as an option.
    if handoff.get("type") != "git_handoff" or not (commit and all(c in HEX for c in commit)):
        return handoff
    found = state_dirs_in(sender(path).worktree, commit)
    if not found:
        return handoff
    dirs = ", ".join(f"{text.shown(name)}/" for name in found)
    return handoff.with_header(
        "warning",
        f"commit {commit} contains {dirs}, swarmforge's own state, which is never "
        "committed; do not merge it as it is",
    )
