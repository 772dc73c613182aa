"""`gc --artifacts`: the git-ignored build output of stopped roles' worktrees.

Dozens of worktrees, each with its own build output and dependencies, fill a disk
(disk.py measures them).

The sweep removes only what git itself calls ignored in a stopped role's worktree, as
`git clean -dX` would, listed first and removed here, so a dry run names exactly what a
real one removes. Untracked files that git does not ignore are work, not output, and
stay; so do the main checkout (the user's own), swarmforge's state, nested
repositories, and every worktree a process still works in.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import asdict, dataclass, field

import psutil

from swarmforge import tagging
from swarmforge.config import sessionrecord
from swarmforge.git import command
from swarmforge.swarm.disk import Seen, in_main_checkout, path_bytes

# Ignored through info/exclude on purpose: swarmforge's state, never build output.
PROTECTED = frozenset({".swarmforge", ".worktrees", ".git"})


@dataclass(frozen=True)
class Artifact:
    """An ignored file or directory removed (or, in a dry run, to be removed)."""

    role: str
    path: str
    bytes: int


@dataclass(frozen=True)
class Skipped:
    """A worktree, or a path in one, the sweep left alone, and why."""

    role: str
    path: str
    reason: str


@dataclass(frozen=True)
class Sweep:
    """What `gc --artifacts` removed, or would remove with `--dry-run`."""

    dry_run: bool
    removed: list[Artifact] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[Skipped] = field(default_factory=list)  # the reason is the error

    @property
    def bytes(self) -> int:
        """Disk freed (or to be freed): hard links shared between removed paths count once."""
        return sum(a.bytes for a in self.removed)

    def as_json(self) -> dict[str, object]:
        shown = asdict(self)
        shown["bytes"] = self.bytes
        return shown


def ignored(tree: str) -> list[str] | None:
    """Paths in `tree` that git ignores, relative to it; a wholly ignored directory once.

    The same list `git clean -ndX` prints. `--untracked-files=normal` overrides a user's
    `status.showUntrackedFiles=no`, which would hide ignored paths too. None when git
    cannot read the worktree.
    """
    result = command.run(
        tree,
        *("status", "--porcelain=v1", "-z", "--no-renames"),
        *("--ignored=traditional", "--untracked-files=normal"),
    )
    if not result.ok:
        return None
    return [
        os.fsdecode(entry[3:]).rstrip("/")
        for entry in result.stdout.split(b"\0")
        if entry.startswith(b"!! ")
    ]


def _why_kept(tree: str, rel: str) -> str | None:
    """Why an ignored path must stay, or None when it may go."""
    if rel.split("/", 1)[0] in PROTECTED:
        return "swarmforge state"
    full = os.path.join(tree, rel)
    parent = os.path.dirname(full)
    expected = os.path.normpath(os.path.join(os.path.realpath(tree), os.path.dirname(rel)))
    if os.path.realpath(parent) != expected:
        return "reached through a symlink"  # removing it would remove outside the worktree
    if os.path.isdir(full) and not os.path.islink(full) and os.path.lexists(f"{full}/.git"):
        return "a git repository of its own"  # git clean -X leaves these too
    return None


def _remove(path: str) -> None:
    """Remove a file, a symlink (never its target) or a whole directory."""
    if stat.S_ISDIR(os.lstat(path).st_mode):
        shutil.rmtree(path)  # unlinks symlinks inside; never follows them
    else:
        os.unlink(path)


def _sweep_tree(role: str, tree: str, dry_run: bool, seen: Seen, found: Sweep) -> None:
    """Remove (or list) the ignored paths of one stopped role's worktree into `found`."""
    paths = ignored(tree)
    if paths is None:
        found.skipped.append(Skipped(role, tree, "git cannot read this worktree"))
        return
    for rel in paths:
        full = os.path.join(tree, rel)
        why = _why_kept(tree, rel)
        if why == "swarmforge state":
            continue  # always there: not worth a line
        if why is not None:
            found.skipped.append(Skipped(role, full, why))
            continue
        size = path_bytes(full, seen)
        try:
            if not dry_run:
                _remove(full)
        except OSError as e:
            found.failed.append(Skipped(role, full, e.strerror or str(e)))
            continue
        found.removed.append(Artifact(role, full, size))


def _exempt() -> set[int]:
    """This process and its ancestors: the user's shell may stand in a worktree."""
    me = psutil.Process()
    return {me.pid, *(p.pid for p in me.parents())}


def _users(root: str, trees: dict[str, str]) -> dict[str, str]:
    """Worktrees some process still works in (by role tag or by its directory), and why.

    `trees` maps each worktree to its role. A server an agent left behind carries the
    role's tag; anything else standing in the worktree (a build started by hand) may be
    reading its output.
    """
    project = os.path.realpath(root)
    by_role = {role: tree for tree, role in trees.items()}
    busy: dict[str, str] = {}
    exempt = _exempt()
    for process in psutil.process_iter():
        if process.pid in exempt:
            continue
        try:
            env = process.environ()
            tree = by_role.get(env.get("SWARMFORGE_ROLE", ""))
            if env.get(tagging.PROJECT_TAG) != project or tree is None:
                tree = _containing(process.cwd(), trees)
            if tree is not None and process.status() != psutil.STATUS_ZOMBIE:
                busy.setdefault(tree, f"process {process.pid} ({process.name()}) works there")
        except psutil.Error:
            continue  # gone meanwhile, or not ours to read
    return busy


def _containing(directory: str, trees: dict[str, str]) -> str | None:
    """The worktree `directory` is in, if any."""
    return next((t for t in trees if directory == t or directory.startswith(t + os.sep)), None)


def _stopped_trees(root: str) -> tuple[dict[str, str], list[Skipped]]:
    """The run's own worktrees (path: role) whose role is not running, and those left alone.

    A role is running when `status` says so: the same judgement `status` shows.
    """
    from swarmforge.swarm.status.summary import status

    record = sessionrecord.load(root)
    if record is None:
        return {}, []
    alive = {r.role for r in status(root).roles if r.alive}
    home = os.path.join(root, ".worktrees") + os.sep
    trees: dict[str, str] = {}
    running: list[Skipped] = []
    for role in record.roles:
        tree = os.path.realpath(role.path)
        if in_main_checkout(root, role) or not tree.startswith(home) or not os.path.isdir(tree):
            continue
        if role.name in alive:
            running.append(Skipped(role.name, tree, "the role is running"))
        else:
            trees.setdefault(tree, role.name)
    running_trees = {s.path for s in running}
    return {t: r for t, r in trees.items() if t not in running_trees}, running


def sweep(root: str, dry_run: bool = False) -> Sweep:
    """Remove the git-ignored files and directories of every stopped role's worktree.

    With `dry_run`, nothing is removed: the result names what would be.
    """
    root = os.path.realpath(root)
    found = Sweep(dry_run)
    trees, running = _stopped_trees(root)
    found.skipped.extend(running)
    busy = _users(root, trees) if trees else {}
    seen: Seen = set()
    for tree, role in sorted(trees.items()):
        if tree in busy:
            found.skipped.append(Skipped(role, tree, busy[tree]))
        else:
            _sweep_tree(role, tree, dry_run, seen, found)
    return found
