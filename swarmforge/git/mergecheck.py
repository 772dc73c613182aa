"""Whether a handed-over commit merges cleanly into a recipient's branch, asked of git alone.

`git merge-tree --write-tree` merges two commits inside the object database: it
writes objects only, never a file of a worktree, never an index, and moves no HEAD,
so a recipient busy in its own worktree is never disturbed. The recipient's branch
is the HEAD of its worktree, read by running git there (`git -C <worktree>`).

merge-tree also exits 1 for a commit it cannot find, so the commit is looked up
first: `missing-commit` must never read as a conflict. Any other failure of git is a
`CheckFailed`, which the daemon logs and delivers past, without a result.
"""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError
from swarmforge.git import command, objects
from swarmforge.proc import spawn
from swarmforge.text import shown

CLEAN, CONFLICT, MISSING = "clean", "conflict", "missing-commit"
STATUS_HEADER, PATHS_HEADER = "merge_check", "merge_conflicts"
HEADERS = (STATUS_HEADER, PATHS_HEADER)
MAX_SHOWN = 10  # conflicting paths named in the header: the printout is read by an agent
MAX_LISTED = 100  # named in the event: a line of the event log, not a report


class CheckFailed(Exception):
    """git could not answer; the message says why, on one line."""


class MergeCheck:
    """The result for one recipient: a status, and for a conflict the paths at fault."""

    __slots__ = ("commit", "paths", "status")

    def __init__(self, status: str, commit: str, paths: list[str] | None = None) -> None:
        self.status = status
        self.commit = commit  # as the handoff spells it
        self.paths = paths or []

    def headers(self) -> list[tuple[str, str]]:
        """The reserved headers that carry this result on the recipient's copy."""
        found = [(STATUS_HEADER, self.status)]
        if self.status == CONFLICT:
            found.append((PATHS_HEADER, listed(self.paths, MAX_SHOWN)))
        return found


def listed(paths: list[str], limit: int) -> str:
    """`paths` comma-separated, the first `limit` of them, then how many more there are."""
    text = ", ".join(paths[:limit])
    if len(paths) > limit:
        text += f" and {len(paths) - limit} more"
    return text


def _git(cwd: str, *args: str) -> spawn.Completed:
    try:
        return command.run(cwd, *args)
    except (SwarmforgeError, OSError) as exc:  # no git on PATH, no process left to start
        raise CheckFailed(f"git could not run: {exc}") from None


def _said(result: spawn.Completed) -> str:
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    return f"'git {result.argv[3]}' exited {result.returncode}" + (
        f": {lines[-1]}" if lines else ""
    )


def resolve(cwd: str, commit: str) -> str | None:
    """The full id of the commit abbreviated `commit` (hex), or None if the repository lacks it.

    Looked up as the gate looks it up (`objects.lookup`): a branch or tag spelt like
    the abbreviation never stands in for it. CheckFailed when git itself cannot look.
    """
    try:
        return objects.lookup(cwd, commit, abbreviation=True).commit
    except command.GitFailed as exc:
        raise CheckFailed(exc.message.rstrip(".")) from None
    except (SwarmforgeError, OSError) as exc:
        raise CheckFailed(f"git could not run: {exc}") from None


def against(worktree: str, oid: str, commit: str) -> MergeCheck:
    """How commit `oid` (full id; `commit` as the handoff spells it) merges into `worktree`'s HEAD.

    Exit 0 is a clean merge and 1 a conflict, the output then being the tree written
    and the conflicting paths, NUL-separated (`-z`: a path may hold any character).
    """
    result = _git(
        worktree, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", "HEAD", oid
    )
    if result.ok:
        return MergeCheck(CLEAN, commit)
    fields = result.stdout.decode(errors="replace").split("\0")
    # One entry per path, in order, each fit for one line of a header (a path may hold
    # a line break).
    paths = list(dict.fromkeys(shown(p) for p in fields[1:] if p))
    if result.returncode != 1 or not paths:
        raise CheckFailed(_said(result))
    return MergeCheck(CONFLICT, commit, paths)
