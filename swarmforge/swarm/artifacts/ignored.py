"""One stopped role's worktree: the paths git ignores in it, removed unless they must stay."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from swarmforge.git import command
from swarmforge.git.nested import repositories_in
from swarmforge.swarm.artifacts.report import Artifact, Skipped, Sweep
from swarmforge.swarm.disk import Seen, path_bytes

# Ignored through info/exclude on purpose: swarmforge's state, never build output.
PROTECTED = frozenset({".swarmforge", ".worktrees", ".git"})


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
    full = Path(tree, rel)
    expected = Path(os.path.realpath(tree), rel).parent
    if Path(os.path.realpath(full.parent)) != expected:
        return "reached through a symlink"  # removing it would remove outside the worktree
    if full.is_dir() and not full.is_symlink():
        inside = repositories_in(str(full))
        if inside:  # git clean -X leaves these too, at any depth
            where = "" if inside[0] == "." else f" ({inside[0]})"
            return f"holds a git repository of its own{where}"
    return None


def _remove(path: Path) -> None:
    """Remove a file, a symlink (never its target) or a whole directory."""
    if stat.S_ISDIR(path.lstat().st_mode):
        shutil.rmtree(path)  # unlinks symlinks inside; never follows them
    else:
        path.unlink()


def sweep_tree(role: str, tree: str, dry_run: bool, seen: Seen, found: Sweep) -> None:
    """Remove (or list) the ignored paths of one stopped role's worktree into `found`."""
    paths = ignored(tree)
    if paths is None:
        found.skipped.append(Skipped(role, tree, "git cannot read this worktree"))
        return
    for rel in paths:
        full = Path(tree, rel)
        why = _why_kept(tree, rel)
        if why == "swarmforge state":
            continue  # always there: not worth a line
        if why is not None:
            found.skipped.append(Skipped(role, str(full), why))
            continue
        size = path_bytes(full, seen)
        try:
            if not dry_run:
                _remove(full)
        except OSError as e:
            found.failed.append(Skipped(role, str(full), e.strerror or str(e)))
            continue
        found.removed.append(Artifact(role, str(full), size))
