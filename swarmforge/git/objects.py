"""Looking a commit up by name: the one way swarmforge does it, through the git CLI.

`lookup` asks `git cat-file --batch-check` for the name and for the commit it
stands for, in one process: 1.7 ms (bench/gitlookup.py). pygit2 answers in
0.26 ms once imported, but the import takes ~90 ms, and the gate, on the agents'
hot path with its ~10 ms budget, looks one commit up per handoff; git/repo.py
says where pygit2 stays.

A handoff's commit is an abbreviated object id, never a ref: with
`abbreviation=True` a branch or tag spelt like it never stands in for it, and the
objects with that prefix are counted, so that the gate can refuse an ambiguous one.
"""

from __future__ import annotations

from swarmforge.git.command import git, run
from swarmforge.layout import STATE_DIRS

KINDS = frozenset({"commit", "tree", "blob", "tag"})


class Found:
    """What a name stands for in a repository."""

    __slots__ = ("commit", "kind", "matches", "oid")

    def __init__(self, oid: str | None, kind: str, commit: str | None, matches: int) -> None:
        self.oid = oid  # the object named (a ref's target, unpeeled); None if none or several
        self.kind = kind  # its type: commit, tree, blob or tag; "" without an object
        self.commit = commit  # the full id of the commit it stands for (a tag peeled), or None
        self.matches = matches  # the objects an abbreviation matched; 1 or 0 for other names


NOTHING = Found(None, "", None, 0)


def _parsed(line: str) -> tuple[str, str] | None:
    # "<id> <type> <size>", else "<name> missing" or "<name> ambiguous".
    words = line.split()
    known = len(words) == 3 and words[1] in KINDS and words[2].isdigit()
    return (words[0], words[1]) if known else None


def _answers(cwd: str, name: str) -> tuple[tuple[str, str] | None, str | None]:
    """((id, type) of the object `name` names, or None; the commit it stands for, or None)."""
    said = git(cwd, "cat-file", "--batch-check", input=f"{name}\n{name}^{{commit}}\n".encode())
    lines = [*said.splitlines(), "", ""]
    named, peeled = _parsed(lines[0]), _parsed(lines[1])
    return named, peeled[0] if peeled else None


def _objects_with_prefix(cwd: str, prefix: str) -> list[str]:
    # Lists every object with the prefix and never reads it as a ref name.
    result = run(cwd, "rev-parse", "--disambiguate=" + prefix)
    return result.stdout.decode().split() if result.ok else []


def _found(named: tuple[str, str] | None, commit: str | None) -> Found:
    oid, kind = named or (None, "")
    return Found(oid, kind, commit, 0 if named is None else 1)


def lookup(cwd: str, name: str, *, abbreviation: bool = False) -> Found:
    """What `name` stands for in the repository at `cwd`, read as git reads a revision.

    With `abbreviation`, `name` is a hex abbreviation of an object id: only an object
    whose id starts with it is taken. GitFailed when git cannot look (no repository).
    """
    if not name or "\n" in name:  # one name a line is what cat-file reads
        return NOTHING
    named, commit = _answers(cwd, name)
    if not abbreviation:
        return _found(named, commit)
    prefix = name.lower()
    if named is not None and named[0].startswith(prefix):
        return _found(named, commit)
    # Missing, ambiguous, or a ref spelt like the abbreviation.
    matches = _objects_with_prefix(cwd, prefix)
    if len(matches) == 1:
        return _found(*_answers(cwd, matches[0]))
    # Several objects, of which git takes the one commit when there is one.
    kept = commit if commit is not None and commit.startswith(prefix) else None
    return Found(None, "", kept, len(matches))


def state_dirs_in(cwd: str, commit: str) -> list[str]:
    """Which of STATE_DIRS the tree of `commit` holds (merging it would bring them in)."""
    listed = run(cwd, "ls-tree", "--name-only", commit, "--", *STATE_DIRS)
    if not listed.ok:
        return []  # a commit gone since the gate checked it: the merge will say so
    return [name for name in listed.stdout.decode(errors="replace").splitlines() if name]
