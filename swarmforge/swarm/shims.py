"""Helper scripts for a run's agents, with this installation's interpreter written in.

`up` writes them to `.swarmforge/bin/` and puts that directory first on every
role's PATH, so agents find `swarm_handoff.sh`, `ready_for_next.sh`, ... and
`swarmforge` itself by name whatever way swarmforge was installed, and no lookup
runs per call.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from swarmforge import filewrite, statedir
from swarmforge.git.guard import GUARDED, VALUED
from swarmforge.layout import BIN_DIR, SCRIPTS
from swarmforge.proc import spawn

ENTRY = "import sys; from swarmforge.cli import main; sys.exit(main())"


def script_text(args: tuple[str, ...], python: str) -> str:
    """The text of one helper script."""
    words = " ".join(shlex.quote(a) for a in (python, "-I", "-c", ENTRY, *args))
    return f'#!/bin/sh\n# Written by swarmforge up; see docs/protocol.md.\nexec {words} "$@"\n'


def git_guard(python: str, real_git: str) -> str:
    """The `git` first on every role's PATH: the real git at once, unless the verb is one
    that can destroy work (git/guard.py decides then, and captures first)."""
    guard = " ".join(shlex.quote(a) for a in (python, "-I", "-c", ENTRY, "git-guard"))
    skip = "|".join(VALUED)
    verbs = "|".join(GUARDED)
    return f"""#!/bin/sh
# Written by swarmforge up: a capture of this role's work before git commands that can
# destroy it; see docs/commands.md (recover).
real={shlex.quote(real_git)}
skip=
for arg in "$@"; do
    if [ -n "$skip" ]; then skip=; continue; fi
    case $arg in
        {skip}) skip=1 ;;
        -*) ;;
        {verbs}) exec {guard} "$real" "$@" ;;
        *) break ;;
    esac
done
exec "$real" "$@"
"""


def _without(path: str, directory: Path) -> str:
    """`path` without `directory` (the helpers' own, which holds the guard)."""
    return os.pathsep.join(p for p in path.split(os.pathsep) if p and Path(p) != directory)


def write(root: str, python: str | None = None) -> str:
    """Write every helper script under `<root>/.swarmforge/bin/`; that directory."""
    directory = Path(statedir.path(root, BIN_DIR))
    directory.mkdir(parents=True, exist_ok=True)
    python = python or sys.executable
    scripts = {name: script_text(args, python) for name, args in SCRIPTS.items()}
    command = " ".join(shlex.quote(a) for a in (python, "-I", "-m", "swarmforge"))
    scripts["swarmforge"] = f'#!/bin/sh\n# Written by swarmforge up.\nexec {command} "$@"\n'
    real_git = spawn.which("git", _without(os.environ.get("PATH", ""), directory))
    if real_git is not None:
        scripts["git"] = git_guard(python, real_git)
    for name, text in scripts.items():
        filewrite.atomic_write(str(directory / name), text.encode(), durable=False, mode=0o755)
    return str(directory)
