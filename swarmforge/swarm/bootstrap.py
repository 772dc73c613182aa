"""Bootstrap of a role's new worktree: the git-ignored files it lacks, then setup commands.

A worktree is a fresh checkout of the project's last commit, so it has none of
the files git ignores (`.env`, `node_modules`, caches) and an agent's first
build or test would fail. `[bootstrap]` in swarmforge.toml names what to copy
or link from the main checkout and the commands to run once in the new
worktree (settings.py). Only paths git ignores are taken: what git tracks is
already in the worktree, at the worktree's own commit, and must not be replaced
by the main checkout's copy. Nothing is written outside the worktree and
nothing already there is overwritten.

A setup command that fails or runs out of time marks the role `setup-failed`
(`.swarmforge/setup-failed/<role>.json`): `up` starts every other role but not
that one, and the next `up` runs its bootstrap again.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict

from pydantic import TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from swarmforge import filewrite, fsutil, times
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.startsettings import BootstrapSettings
from swarmforge.errors import shell_status
from swarmforge.git.command import run as run_git
from swarmforge.layout import SETUP_FAILED_DIR, STATE_DIRS
from swarmforge.proc import popen

TAIL_LINES = 20
KILL_GRACE = 3.0  # seconds between SIGTERM and SIGKILL for a setup command out of time
# Never taken from the main checkout, whatever a pattern says: git's own directory, and
# swarmforge's state (mailboxes, session record), which git ignores through info/exclude.
NEVER_TAKEN = (".git", *STATE_DIRS)

Log = Callable[[str], None]


@dataclass(frozen=True)
class SetupFailure:
    """Why a role's bootstrap did not finish, as `.swarmforge/setup-failed/<role>.json` keeps it."""

    role: str
    reason: str  # one sentence: the command and how it ended
    command: str | None = None  # None: `up` stopped before the setup finished
    exit_code: int | None = None  # None: timed out, or never finished
    timed_out: bool = False
    last_lines: tuple[str, ...] = ()
    log: str = ""
    at: str = ""

    def as_json(self) -> dict[str, object]:
        return asdict(self)


_FAILURE = TypeAdapter(SetupFailure)


def mark_path(root: str, role: str) -> str:
    """Where the setup-failed mark of `role` lives."""
    return os.path.join(root, SETUP_FAILED_DIR, f"{role}.json")


def failure(root: str, role: str) -> SetupFailure | None:
    """The role's setup-failed mark, or None when it has none.

    A damaged mark still counts: the role stays unstarted until a bootstrap succeeds.
    """
    path = mark_path(root, role)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    try:
        return _FAILURE.validate_json(data)
    except ValidationError:
        return SetupFailure(role, f"its mark {path} cannot be read", log=path)


def ready(root: str, roles: Iterable[RoleRecord]) -> list[RoleRecord]:
    """The roles whose agents may start: every one not marked setup-failed."""
    return [role for role in roles if not os.path.lexists(mark_path(root, role.name))]


def failures(root: str, names: Iterable[str]) -> list[SetupFailure]:
    """The setup-failed marks of the roles `names`, in that order."""
    return [found for name in names if (found := failure(root, name)) is not None]


def _mark(root: str, found: SetupFailure, durable: bool = True) -> None:
    path = mark_path(root, found.role)
    fsutil.makedirs(os.path.dirname(path))
    data = (json.dumps(found.as_json(), indent=2) + "\n").encode()
    filewrite.atomic_write(path, data, durable=durable)


def _clear(root: str, role: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(mark_path(root, role))


def _now() -> str:
    return times.stamp()


def run(
    root: str,
    role: RoleRecord,
    settings: BootstrapSettings,
    env: Mapping[str, str],
    log_path: str,
) -> SetupFailure | None:
    """Bootstrap `role`'s worktree: copy, link, then run the setup; the failure, if any.

    The role is marked setup-failed before anything runs, so an `up` killed half-way
    leaves it marked and the next `up` tries again; success clears the mark. That first
    mark is not synced to disk: it only has to outlive a killed `up`, and a sync would
    cost more than the rest of a bootstrap without setup commands.
    """
    if not settings.wanted:
        _clear(root, role.name)  # nothing to do, and nothing left to retry
        return None
    interrupted = "up stopped before the setup finished"
    _mark(root, SetupFailure(role.name, interrupted, log=log_path, at=_now()), durable=False)
    with open(log_path, "ab") as out:

        def log(line: str) -> None:
            out.write(f"swarmforge bootstrap: {line}\n".encode())
            out.flush()

        place(root, role.path, settings, log)
    for command in settings.setup:
        found = _setup(role, command, env, log_path, settings.timeout_seconds)
        if found is not None:
            _mark(root, found)
            return found
    _clear(root, role.name)
    return None


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
        if path not in ignored:
            log(f"skipped {path}: git tracks it or does not ignore it")
            continue
        if _put(root, worktree, path, how, log):
            taken.append(path)


def _matches(root: str, patterns: list[tuple[str, str]], log: Log) -> list[tuple[str, str]]:
    """Every path (relative to `root`) a pattern matches, with how to place it."""
    found: list[tuple[str, str]] = []
    for pattern, how in patterns:
        paths = sorted(
            os.path.normpath(p) for p in glob.glob(pattern, root_dir=root, recursive=True)
        )
        if not paths:
            log(f"nothing matches {pattern!r} ({how})")
        for path in paths:
            if path.split("/")[0] in NEVER_TAKEN or path == ".":
                log(f"skipped {path}: swarmforge's or git's own")
            elif path not in (p for p, _ in found):
                found.append((path, how))
    return found


def _ignored(root: str, paths: list[str], log: Log) -> set[str]:
    """Which of `paths` git ignores, asked in one call; none if git cannot say."""
    if not paths:
        return set()
    data = "".join(f"{p}\0" for p in paths).encode()
    result = run_git(root, "check-ignore", "-z", "--stdin", input=data)
    if result.returncode not in (0, 1):  # 1: none of them is ignored
        log(f"git check-ignore failed: {result.stderr.decode(errors='replace').strip()}")
        return set()
    return {p for p in result.stdout.decode(errors="surrogateescape").split("\0") if p}


def _put(root: str, worktree: str, path: str, how: str, log: Log) -> bool:
    """Copy or link `path` into the worktree; False (and why, in `log`) if it was not."""
    source = os.path.join(root, path)
    target = os.path.join(worktree, path)
    if os.path.lexists(target):
        log(f"skipped {path}: already in the worktree")
        return False
    if not _parent_inside(worktree, target):
        log(f"skipped {path}: its directory in the worktree leads outside it")
        return False
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if how == "symlink":
            os.symlink(source, target)
            log(f"linked {path} -> {source}")
        else:
            _copy(source, target)
            log(f"copied {path}")
    except (OSError, shutil.Error) as exc:
        log(f"could not {how} {path}: {exc}")
        return False
    return True


def _parent_inside(worktree: str, target: str) -> bool:
    """True if the nearest existing directory above `target` is inside `worktree` (a
    symlinked directory there could point anywhere)."""
    top = os.path.realpath(worktree)
    parent = os.path.dirname(target)
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    real = os.path.realpath(parent)
    return real == top or real.startswith(top + os.sep)


def _copy(source: str, target: str) -> None:
    """Copy a file, a symlink (as a symlink) or a whole directory, keeping modes."""
    if os.path.isdir(source) and not os.path.islink(source):
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def _setup(
    role: RoleRecord, command: str, env: Mapping[str, str], log_path: str, timeout: float
) -> SetupFailure | None:
    """Run one setup command in the worktree, its output appended to the role's log."""
    with open(log_path, "ab") as out:
        out.write(f"swarmforge bootstrap: $ {command}\n".encode())
        out.flush()
        begin = os.fstat(out.fileno()).st_size
        started = time.monotonic()
        child = popen.start(
            ["sh", "-c", command],
            cwd=role.path,
            env=env,
            stdin=popen.DEVNULL,
            stdout=out.fileno(),
            stderr=popen.STDOUT,
            session=True,
        )
        code = _wait(child, timeout)
        took = time.monotonic() - started
        ended = f"exited {code}" if code is not None else f"timed out after {timeout:g}s"
        out.write(f"swarmforge bootstrap: {ended} in {took:.1f}s\n".encode())
    if code == 0:
        return None
    return SetupFailure(
        role=role.name,
        reason=f"setup command `{command}` {ended}",
        command=command,
        exit_code=code,
        timed_out=code is None,
        last_lines=tuple(_tail(log_path, begin)),
        log=log_path,
        at=_now(),
    )


def _wait(child: popen.Started, timeout: float) -> int | None:
    """The command's exit as a shell shows it; None if it ran out of time (its whole
    process group is then ended: TERM, then KILL after a grace)."""
    try:
        return shell_status(child.wait(timeout))
    except subprocess.TimeoutExpired:
        pass
    for signum, grace in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signum)
        try:
            child.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)  # what the shell left behind in its group
    return None


def _tail(log_path: str, begin: int) -> list[str]:
    """The last lines the command wrote (the log from offset `begin` on)."""
    try:
        with open(log_path, "rb") as f:
            f.seek(max(begin, os.fstat(f.fileno()).st_size - 16384))
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if not line.startswith("swarmforge bootstrap: ")]
    return lines[-TAIL_LINES:]
