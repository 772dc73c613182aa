"""A run's base commit: the project's HEAD, pushed to the hub for the workers to start from.

It goes to `refs/swarmforge/runs/<runId>/base` on the hub, by URL (after `--`, with
net/hub.py's PROTOCOLS): no remote is added to the project.
"""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError
from swarmforge.git import repo
from swarmforge.git.command import GitFailed, git
from swarmforge.net.hub import PROTOCOLS, quiet_env
from swarmforge.text import shown_url


def base_ref(run_id: str) -> str:
    """Where the orchestrator puts the base commit of run `run_id` on the hub."""
    return f"refs/swarmforge/runs/{run_id}/base"


def head_commit(root: str) -> str:
    """The commit the workers start from: the project's HEAD."""
    checkout = repo.open_checkout(root)
    base = checkout.head if checkout is not None else None
    if base is None:
        raise SwarmforgeError(
            f"--workers needs {root} to be a git checkout with a commit: the workers start from it."
        )
    return base


def push_base(root: str, hub: str, run_id: str, base: str) -> None:
    """Push `base` to the hub as the base commit of run `run_id`."""
    try:
        env = quiet_env()
        git(
            root,
            "push",
            "--quiet",
            "--no-verify",
            "--",
            hub,
            f"+{base}:{base_ref(run_id)}",
            env=env,
            options=PROTOCOLS,
        )
    except GitFailed as exc:
        raise SwarmforgeError(
            f"cannot push the run's base commit to the hub {shown_url(hub)}: {exc.message}"
        ) from None
