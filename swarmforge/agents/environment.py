"""The environment a role's agent runs in: an allowlist, never the whole environment of the
shell that ran `up`.

A token or a cloud key in the user's shell (`GITHUB_TOKEN`, `AWS_*`) reaches an agent only
when its role is given it. An agent gets:

- what any program needs to run in a terminal (`BASE`: PATH, HOME, TERM, the locale, the
  temporary directory, proxies and certificate files);
- the variables its own CLI reads (`Agent.env_vars`: claude's `ANTHROPIC_*` and
  `CLAUDE_*`, codex's `OPENAI_*` and `CODEX_*`, ...);
- what its role's table of swarmforge.toml passes on (`pass_env`) or sets (`env`);
- what swarmforge sets for the role (`role_vars`: its name, port, run tags, the helpers
  on PATH), its own temporary directory as TMPDIR, SHLVL as a terminal's shell has it,
  and what `up`'s caller gave the role.

The temporary directory (where: tempdirs.py) is writable in the role's sandbox where
the rest of /tmp is not, and lies outside the repository, where no git command run in
a checkout reaches it. The directory above the projects is the user's own (mode 0700),
or swarmforge refuses to use it.

The bootstrap `setup` commands of a new worktree are the user's own and keep the whole
environment (`rolerecord.role_env`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from swarmforge.agents.registry import agent
from swarmforge.config.rolerecord import RoleRecord, role_vars
from swarmforge.config.settings import RoleSettings
from swarmforge.errors import SwarmforgeError
from swarmforge.proc import policy
from swarmforge.tempdirs import project_temp, temp_base, temp_dir

# bash reads ~/.bashrc even when it is not interactive if it is the first shell (SHLVL
# unset) and its input is a socket, taking itself to be started by sshd; codex gives the
# shells of its commands a socket for input, and a ~/.bashrc that sets PATH would hide
# the helpers from them. An agent started from a terminal inherits its shell's SHLVL.
SHELL_LEVEL = {"SHLVL": "1"}

# What any program in a terminal needs, and nothing that grants anything.
BASE = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "COLORTERM",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "SWARMFORGE_*",
)


def matches(name: str, patterns: Iterable[str]) -> bool:
    """True if `name` is one of `patterns`, or starts with one that ends in `*`."""
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def allowed(environ: Mapping[str, str], patterns: Iterable[str]) -> dict[str, str]:
    """The variables of `environ` that `patterns` allow."""
    kept = tuple(patterns)
    return {name: value for name, value in environ.items() if matches(name, kept)}


def make_temp_dir(root: str, role: str) -> str:
    """Make `role`'s temporary directory, in a directory only this user may enter."""
    base = temp_base()
    with contextlib.suppress(FileExistsError):
        base.mkdir(mode=0o700)
    found = base.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise SwarmforgeError(
            f"{base} is not a directory of yours that only you may enter",
            hint="Remove it (or make it yours, mode 0700), then start again.",
        )
    temp = Path(temp_dir(root, role))
    for directory in (temp.parent, temp):
        directory.mkdir(mode=0o700, exist_ok=True)
        directory.chmod(0o700)  # whatever the umask: claude keeps its inbox socket here
    return str(temp)


def remove_temp_dirs(root: str) -> None:
    """Remove the temporary directories of the agents of the project at `root`."""
    shutil.rmtree(project_temp(root), ignore_errors=True)


def agent_env(
    root: str, run_id: str, role: RoleRecord, settings: RoleSettings
) -> policy.Environment:
    """The environment of `role`'s agent (and of an exec role's commands)."""
    patterns = (*BASE, *agent(role.agent).env_vars, *settings.pass_env)
    temp = make_temp_dir(root, role.name)
    own = {"TMPDIR": temp, **SHELL_LEVEL, **settings.env, **role_vars(root, run_id, role)}
    return policy.environment(allowed(os.environ, patterns), own)
