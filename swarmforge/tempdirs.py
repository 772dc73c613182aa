"""Where the agents' own temporary directories are: `/tmp/swarmforge-<uid>/<project>/<role>`.

Each role's agent has one as its TMPDIR (agents/environment.py makes them). They lie
under /tmp, not $TMPDIR, which may be long, so that their paths stay short: claude's
sandbox makes its proxies' Unix sockets there, and a socket's path may not exceed 107
bytes. `<project>` is the project's digest, as its private tmux socket's.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.projectroot import project_digest

TEMP_ROOT = "/tmp"


def temp_base() -> Path:
    """The user's own directory above every project's agents' temporary directories."""
    return Path(TEMP_ROOT, f"swarmforge-{os.getuid()}")


def project_temp(root: str) -> Path:
    """The directory of the temporary directories of the agents of the project at `root`."""
    return temp_base() / project_digest(root)


def temp_dir(root: str, role: str) -> str:
    """The temporary directory of `role`'s agent (its TMPDIR)."""
    return str(project_temp(root) / role)
