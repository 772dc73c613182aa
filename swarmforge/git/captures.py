"""Captures: a role's work as it stands, kept as commits under `refs/swarmforge/captures/`.

A capture is a commit whose tree holds every file of the worktree that git does not
ignore, as it is on disk. Its first parent is HEAD, on a branch or detached; its
second is a commit of the index as it was staged. It is built in a scratch copy of
the index (rescue.scratch_index), so the worktree, its index and every branch are
left exactly as they were, and no lock an agent's git takes is ever held.

Each capture has a ref of its own, `refs/swarmforge/captures/<role>/<UTC stamp>`:
`git gc` keeps what refs name, `down --purge` removes branches and worktrees, not
these, and only `prune` (by age and count, never a role's newest) deletes them. A
capture that would be the same as the role's last one (same files, same HEAD) is not
made again, so taking one often costs little more than git's look at the worktree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from swarmforge import events, times
from swarmforge.errors import SwarmforgeError
from swarmforge.git.command import git, run
from swarmforge.git.names import check_refname
from swarmforge.git.objects import lookup
from swarmforge.git.rescue import scratch_index
from swarmforge.layout import WORKTREES_DIR
from swarmforge.proc import policy

PREFIX = "refs/swarmforge/captures/"
# Captures are swarmforge's commits, not the user's: one fixed identity, no config read.
IDENTITY = {
    "GIT_AUTHOR_NAME": "swarmforge",
    "GIT_AUTHOR_EMAIL": "swarmforge@localhost",
    "GIT_COMMITTER_NAME": "swarmforge",
    "GIT_COMMITTER_EMAIL": "swarmforge@localhost",
}
_FIELDS = "%(refname)%00%(objectname)%00%(tree)%00%(parent)%00%(contents:body)%00"


@dataclass(frozen=True)
class Capture:
    """One capture of a role's worktree."""

    role: str
    name: str  # its UTC stamp, e.g. 20261204T205012123456Z
    commit: str
    tree: str
    head: str | None  # the commit HEAD was on, None before a first commit
    trigger: str  # what took it: "handoff-sent", "down", "git reset --hard", ...
    branch: str  # the branch HEAD was on, "" when detached

    @property
    def ref(self) -> str:
        """Its ref."""
        return f"{PREFIX}{self.role}/{self.name}"

    @property
    def seconds(self) -> float:
        """When it was taken, in seconds since the epoch."""
        return times.parse(f"{self.name[:15]}Z") + int(self.name[15:21] or 0) / 1e6


def role_prefix(role: str) -> str:
    """The refs under which `role`'s captures are kept; SwarmforgeError if the name cannot
    be part of a ref."""
    return check_refname(f"{PREFIX}{role}", "capture ref") + "/"


def _parse(block: str) -> Capture | None:
    fields = block.split("\0")
    if len(fields) < 5:
        return None
    ref, commit, tree, parents, body = fields[:5]
    role, _, name = ref[len(PREFIX) :].rpartition("/")
    said = {}
    for line in body.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            said[key] = value
    head = parents.split()[0] if parents.split() else None
    return Capture(role, name, commit, tree, head, said.get("trigger", ""), said.get("branch", ""))


def listed(root: str, role: str | None = None) -> list[Capture]:
    """Every capture in the repository of `root` (of `role` only, if given), oldest first
    per role."""
    where = role_prefix(role) if role is not None else PREFIX
    out = git(root, "for-each-ref", "--sort=refname", f"--format={_FIELDS}", where)
    found = (_parse(block.lstrip("\n")) for block in out.split("\0\n") if block.strip())
    return [c for c in found if c is not None and c.name]


def latest(root: str, role: str) -> Capture | None:
    """The role's newest capture, if any."""
    out = git(
        root, "for-each-ref", "--sort=-refname", "--count=1", f"--format={_FIELDS}",
        role_prefix(role),
    )  # fmt: skip
    return _parse(out.rstrip("\n")) if out.strip() else None


def _where(workdir: str) -> tuple[str, str | None, str]:
    """The worktree's own git dir, the commit HEAD is on (None if unborn) and its branch."""
    found = run(workdir, "rev-parse", "--absolute-git-dir", "--symbolic-full-name", "HEAD")
    lines = found.stdout.decode(errors="surrogateescape").splitlines()
    if not found.ok or not lines:
        raise SwarmforgeError(f"Cannot capture {workdir}: it is not a git checkout.")
    branch = lines[1] if len(lines) > 1 and lines[1].startswith("refs/heads/") else ""
    return lines[0], lookup(workdir, "HEAD").commit, branch


def take(workdir: str, role: str, trigger: str) -> Capture | None:
    """Capture the worktree of `role` at `workdir`; the capture, or None when it would be
    the same as the role's last. SwarmforgeError when git cannot."""
    prefix = role_prefix(role)
    git_dir, head, branch = _where(workdir)
    env = policy.child_env(IDENTITY)
    with scratch_index(git_dir) as index:
        scratch = policy.child_env({"GIT_INDEX_FILE": index})  # a plain dict loses it
        staged = run(workdir, "write-tree", env=scratch)
        git(workdir, "add", "--all", env=scratch)
        tree = git(workdir, "write-tree", env=scratch).strip()
    last = latest(workdir, role)
    if last is not None and (last.tree, last.head) == (tree, head):
        return None
    parents = ["-p", head] if head else []
    if staged.ok:
        index_commit = git(
            workdir, "commit-tree", staged.stdout.decode().strip(), *parents,
            "-m", f"index of {role}", env=env,
        ).strip()  # fmt: skip
        parents += ["-p", index_commit]
    trigger = events.printable(trigger)  # one line: it is a field of the message
    message = (
        f"capture of {role}: {trigger}\n\nrole: {role}\ntrigger: {trigger}\nbranch: {branch}\n"
    )
    commit = git(workdir, "commit-tree", tree, *parents, "-m", message, env=env).strip()
    for _ in range(3):
        name = times.compact(micro=True)
        # "" as the old value: the ref must not exist yet; a capture is never overwritten.
        made = run(workdir, "update-ref", "-m", message.splitlines()[0], prefix + name, commit, "")
        if made.ok:
            return Capture(role, name, commit, tree, head, trigger, branch)
        if lookup(workdir, prefix + name).oid is None:
            break  # not a capture taken in the same microsecond: say why
    stderr = made.stderr.decode(errors="replace").strip()
    raise SwarmforgeError(f"Cannot record the capture of {role}: {stderr}")


def prune(root: str, keep: int, max_age: float, now: float | None = None) -> list[Capture]:
    """Delete captures beyond the newest `keep` of each role, or older than `max_age`
    seconds; never a role's newest. The captures deleted."""
    now = time.time() if now is None else now
    oldest = times.compact(now - max_age, micro=True)
    by_role: dict[str, list[Capture]] = {}
    for capture in listed(root):
        by_role.setdefault(capture.role, []).append(capture)
    doomed = []
    for captures in by_role.values():
        newest_first = sorted(captures, key=lambda c: c.name, reverse=True)
        doomed += [c for i, c in enumerate(newest_first) if i and (i >= keep or c.name < oldest)]
    if doomed:
        lines = "".join(f"delete {c.ref} {c.commit}\n" for c in doomed)
        git(root, "update-ref", "--stdin", input=lines.encode())
    return doomed


def changed_files(root: str, capture: Capture, against: str) -> list[str]:
    """The files in which `capture` differs from the commit `against`."""
    out = git(root, "diff-tree", "-r", "--name-only", "-z", against, capture.commit)
    return [name for name in out.split("\0") if name]


def main_top(path: str) -> str:
    """The top directory of the main checkout of the repository `path` is in."""
    common = git(path, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return str(Path(common).parent)


def find(root: str, role: str, name: str) -> Capture:
    """The capture `name` of `role` (its stamp, or the start of it); SwarmforgeError
    naming what there is when none or several match."""
    captures = listed(root, role)
    if not captures:
        raise SwarmforgeError(f"No captures of role {role!r}: `swarmforge recover` lists them.")
    matching = [c for c in captures if c.name.startswith(name)] if name else []
    if len(matching) != 1:
        said = "matches several" if matching else "matches none"
        raise SwarmforgeError(
            f"Capture {name!r} {said} of role {role!r}: `swarmforge recover {role}` lists them."
        )
    return matching[0]


def restore(root: str, capture: Capture) -> tuple[str, str]:
    """Check `capture` out into a new branch and worktree of its own, HEAD, index and files
    as they were when it was taken; the branch and the worktree's path.

    The branch starts at the commit HEAD was on, the files are the capture's and the
    index its staged state: `git status` there shows what the role had not committed.
    Nothing that exists is touched: an existing branch or directory is refused.
    """
    branch = check_refname(f"recovered/{capture.role}/{capture.name}", "branch")
    path = str(Path(root, WORKTREES_DIR, f"recovered-{capture.role}-{capture.name}"))
    if Path(path).exists() or lookup(root, f"refs/heads/{branch}").oid is not None:
        raise SwarmforgeError(
            f"Capture {capture.name} of {capture.role} was restored already: {path}"
        )
    start = capture.head or capture.commit  # before a first commit: the capture itself
    git(root, "worktree", "add", "-q", "-b", branch, path, start)
    git(path, "restore", f"--source={capture.commit}", "--worktree", "--", ".")
    staged = lookup(root, f"{capture.commit}^2").commit  # the index, as it was staged
    if staged is not None:
        git(path, "read-tree", staged)
    return branch, path


def take_logged(root: str, role: str, workdir: str, trigger: str) -> Capture | None:
    """`take`, with a `captured` event in the log of the project at `root` when one is made."""
    made = take(workdir, role, trigger)
    if made is not None:
        fields = {"role": role, "capture": made.name, "trigger": made.trigger}
        events.emit(root, "captured", fields)
    return made
