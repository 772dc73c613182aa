"""Helper scripts for a run's agents, with this installation's interpreter written in.

`up` writes them to `.swarmforge/bin/` and puts that directory first on every
role's PATH, so agents find `swarm_handoff.sh`, `ready_for_next.sh`, ... and
`swarmforge` itself by name whatever way swarmforge was installed, and no lookup
runs per call.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from swarmforge import filewrite
from swarmforge.layout import BIN_DIR, SCRIPTS

ENTRY = "import sys; from swarmforge.cli import main; sys.exit(main())"


def script_text(args: tuple[str, ...], python: str) -> str:
    """The text of one helper script."""
    words = " ".join(shlex.quote(a) for a in (python, "-I", "-c", ENTRY, *args))
    return f'#!/bin/sh\n# Written by swarmforge up; see docs/protocol.md.\nexec {words} "$@"\n'


def write(root: str, python: str | None = None) -> str:
    """Write every helper script under `<root>/.swarmforge/bin/`; that directory."""
    directory = Path(root, BIN_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    python = python or sys.executable
    scripts = {name: script_text(args, python) for name, args in SCRIPTS.items()}
    command = " ".join(shlex.quote(a) for a in (python, "-I", "-m", "swarmforge"))
    scripts["swarmforge"] = f'#!/bin/sh\n# Written by swarmforge up.\nexec {command} "$@"\n'
    for name, text in scripts.items():
        filewrite.atomic_write(str(directory / name), text.encode(), durable=False, mode=0o755)
    return str(directory)
