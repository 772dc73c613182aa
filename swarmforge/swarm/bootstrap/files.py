"""The git-ignored files a new worktree lacks, copied or linked from the main checkout."""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from swarmforge.config.startsettings import BootstrapSettings
from swarmforge.git.command import run as run_git
from swarmforge.layout import STATE_DIRS

# Never taken from the main checkout, whatever a pattern says: git's own directory, and
# swarmforge's state (mailboxes, session record), which git ignores through info/exclude.
NEVER_TAKEN = (".git", *STATE_DIRS)


Log = Callable[[str], None]


def place(root: str, worktree: str, settings: BootstrapSettings, log: Log) -> None:
    """Copy and link into `worktree` the git-ignored paths of the main checkout at `root`
    that the settings' patterns match; every path skipped is named in `log`."""
    wanted = _matches(root, [(p, "copy") for p in settings.copy_paths], log)
    wanted += _matches(root, [(p, "symlink") for p in settings.symlink], log)
    ignored = _ignored(root, [path for path, _ in wanted], log)
    taken: list[str] = []
    for path, how in wanted:
        if any(path == t or path.startswith(t + "/") for t in taken):
            continue  # inside a path already copied or linked
        if ignored is None:
            log(f"skipped {path}: git could not say whether it ignores it")
            continue
        if path not in ignored:
            log(f"skipped {path}: git tracks it or does not ignore it")
            continue
        if _put(root, worktree, path, how, log):
            taken.append(path)


def _matches(root: str, patterns: list[tuple[str, str]], log: Log) -> list[tuple[str, str]]:
    """Every path (relative to `root`) a pattern matches, with how to place it."""
    found: list[tuple[str, str]] = []
    for pattern, how in patterns:
        # glob.glob on purpose: Path.glob matches hidden names with `*`, finds only
        # directories with a final `**` and refuses absolute patterns.
        matched = glob.glob(pattern, root_dir=root, recursive=True)  # noqa: PTH207 see above
        paths = sorted(os.path.normpath(p) for p in matched)
        if not paths:
            log(f"nothing matches {pattern!r} ({how})")
        for path in paths:
            link = _link_above(root, path)
            if path.split("/")[0] in NEVER_TAKEN or path == ".":
                log(f"skipped {path}: swarmforge's or git's own")
            elif link is not None:
                # git refuses to say anything of such a path, and of all asked with it.
                log(f"skipped {path}: it lies beyond the symbolic link {link}")
            elif path not in (p for p, _ in found):
                found.append((path, how))
    return found


def _link_above(root: str, path: str) -> str | None:
    """The first directory above `path` (relative to `root`) that is a symbolic link."""
    parts = path.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        above = "/".join(parts[:depth])
        if Path(root, above).is_symlink():
            return above
    return None


def _ignored(root: str, paths: list[str], log: Log) -> set[str] | None:
    """Which of `paths` git ignores, asked in one call; None if git cannot say."""
    if not paths:
        return set()
    data = "".join(f"{p}\0" for p in paths).encode()
    result = run_git(root, "check-ignore", "-z", "--stdin", input=data)
    if result.returncode not in (0, 1):  # 1: none of them is ignored
        log(f"git check-ignore failed: {result.stderr.decode(errors='replace').strip()}")
        return None
    return {p for p in result.stdout.decode(errors="surrogateescape").split("\0") if p}


def _put(root: str, worktree: str, path: str, how: str, log: Log) -> bool:
    """Copy or link `path` into the worktree; False (and why, in `log`) if it was not."""
    source = Path(root, path)
    target = Path(worktree, path)
    if os.path.lexists(target):
        log(f"skipped {path}: already in the worktree")
        return False
    if not _parent_inside(worktree, target):
        log(f"skipped {path}: its directory in the worktree leads outside it")
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if how == "symlink":
            target.symlink_to(source)
            log(f"linked {path} -> {source}")
        else:
            _copy(source, target)
            log(f"copied {path}")
    except (OSError, shutil.Error) as exc:
        log(f"could not {how} {path}: {exc}")
        return False
    return True


def _parent_inside(worktree: str, target: Path) -> bool:
    """True if the nearest existing directory above `target` is inside `worktree` (a
    symlinked directory there could point anywhere)."""
    top = os.path.realpath(worktree)
    parent = target.parent
    while not os.path.lexists(parent):
        parent = parent.parent
    real = os.path.realpath(parent)
    return real == top or real.startswith(top + os.sep)


def _copy(source: Path, target: Path) -> None:
    """Copy a file, a symlink (as a symlink) or a whole directory, keeping modes."""
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)
