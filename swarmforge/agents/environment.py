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
  on PATH), its own temporary directory as TMPDIR (`.swarmforge/tmp/<role>`, writable in
  its sandbox where /tmp is not), and what `up`'s caller gave the role.

The bootstrap `setup` commands of a new worktree are the user's own and keep the whole
environment (`rolerecord.role_env`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from swarmforge.agents.registry import agent
from swarmforge.config.rolerecord import RoleRecord, role_vars
from swarmforge.config.settings import RoleSettings
from swarmforge.layout import TEMP_DIR
from swarmforge.proc import policy

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


def temp_dir(root: str, role: str) -> str:
    """The temporary directory of `role`'s agent (its TMPDIR; `agent_env` makes it)."""
    return str(Path(root, TEMP_DIR, role))


def agent_env(
    root: str, run_id: str, role: RoleRecord, settings: RoleSettings
) -> policy.Environment:
    """The environment of `role`'s agent (and of an exec role's commands)."""
    patterns = (*BASE, *agent(role.agent).env_vars, *settings.pass_env)
    temp = temp_dir(root, role.name)
    Path(temp).mkdir(parents=True, exist_ok=True)
    own = {"TMPDIR": temp, **settings.env, **role_vars(root, run_id, role)}
    return policy.environment(allowed(os.environ, patterns), own)
