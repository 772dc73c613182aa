"""Commit resolution for the gate: "exactly one object, and it must be a commit".

`git cat-file --batch-check` answers in about a millisecond, where importing
pygit2 alone costs tens: the gate runs on every handoff, so it asks git.
"""

from __future__ import annotations

from swarmforge import proc
from swarmforge.layout import STATE_DIRS


def _git(cwd: str, *args: str, input: bytes = b"") -> proc.Completed:
    return proc.run(["git", "-C", cwd, *args], input=input)


def _objects_with_prefix(cwd: str, prefix: str) -> list[str]:
    # Lists every object with the prefix and never reads it as a ref name.
    result = _git(cwd, "rev-parse", "--disambiguate=" + prefix)
    return result.stdout.decode().split() if result.ok else []


def resolve_commit(cwd: str, commit: str) -> tuple[str | None, str | None]:
    """(canonical 10-character abbreviation, None), or (None, the gate's error message)."""
    prefix = commit.lower()
    answer = _git(cwd, "cat-file", "--batch-check", input=prefix.encode() + b"\n")
    words = answer.stdout.decode(errors="replace").split()
    if answer.ok and len(words) == 3 and words[0].startswith(prefix):
        oid, kind = words[0], words[1]
    else:
        # Missing, ambiguous, or a ref that happens to be spelled like the prefix.
        matches = _objects_with_prefix(cwd, prefix)
        if len(matches) != 1:
            return None, (
                "Header 'commit' must resolve to exactly one Git object; "
                f"'{commit}' matched {len(matches)}."
            )
        oid = matches[0]
        kind = _git(cwd, "cat-file", "-t", oid).stdout.decode().strip()
    if kind != "commit":
        return None, f"Header 'commit' must resolve to a commit; '{commit}' resolves to '{kind}'."
    return oid[:10], None


def state_dirs_in(cwd: str, commit: str) -> list[str]:
    """Which of STATE_DIRS the tree of `commit` holds (merging it would bring them in)."""
    listed = _git(cwd, "ls-tree", "--name-only", commit, "--", *STATE_DIRS)
    if not listed.ok:
        return []  # a commit gone since the gate checked it: the merge will say so
    return [name for name in listed.stdout.decode(errors="replace").splitlines() if name]
