"""The tools a swarm needs on this host: Python, git and tmux, each recent enough."""

from __future__ import annotations

import re
import sys
from dataclasses import replace

from swarmforge.doctor.check import Check, Status
from swarmforge.errors import SwarmforgeError
from swarmforge.proc import spawn

PYTHON_MINIMUM = (3, 11)
GIT_MINIMUM = (2, 31)  # `git worktree list --porcelain` prints `prunable` lines since 2.31
TMUX_MINIMUM = (3, 2)  # `new-session -e` (a role's environment) exists since 3.2


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in version)


def check_python(version: tuple[int, ...] | None = None) -> Check:
    """The Python running swarmforge is recent enough."""
    found = tuple(sys.version_info[:3]) if version is None else version
    if found[:2] < PYTHON_MINIMUM:
        want = _dotted(PYTHON_MINIMUM)
        fix = f"install swarmforge with Python {want} or later"
        return Check("python", "FAIL", f"Python {_dotted(found)} is older than {want}", fix)
    return Check("python", "ok", f"Python {_dotted(found)} ({sys.executable})")


def _probe(name: str, flag: str) -> tuple[str | None, str]:
    """(path, version output) of tool `name`; the path is None when it is not on PATH."""
    exe = spawn.which(name)
    if exe is None:
        return None, ""
    try:
        result = spawn.run([exe, flag])
    except (OSError, SwarmforgeError):
        return exe, ""
    return exe, result.stdout.decode(errors="replace").strip() if result.ok else ""


def _tool(name: str, flag: str, minimum: tuple[int, int], need: str, bad: Status) -> Check:
    exe, said = _probe(name, flag)
    want = _dotted(minimum)
    if exe is None:
        return Check(name, bad, f"{name} not found on PATH", f"install {name} {want} or later")
    found = re.search(r"(\d+)\.(\d+)", said)
    if found is None:
        fix = f"make sure it is {name} {want} or later, needed for {need}"
        return Check(name, "warn", f"cannot read the version of {exe} from {said!r}", fix)
    version = (int(found[1]), int(found[2]))
    if version < minimum:
        fix = f"upgrade {name} to {want} or later"
        return Check(name, bad, f"{said} ({exe}) is older than {want}, needed for {need}", fix)
    return Check(name, "ok", f"{said} ({exe})")


def check_git() -> Check:
    """git is on PATH and recent enough for the worktree commands swarmforge runs."""
    return _tool("git", "--version", GIT_MINIMUM, "`git worktree list --porcelain`", "FAIL")


def check_tmux() -> Check:
    """tmux is on PATH and recent enough; only a warning, since the headless backend needs none."""
    found = _tool("tmux", "-V", TMUX_MINIMUM, "`tmux new-session -e`", "warn")
    if found.status == "ok":
        return found
    return replace(
        found,
        detail=found.detail + " (only the tmux backend needs it)",
        fix=found.fix + ", or use `swarmforge up --backend headless`",
    )
