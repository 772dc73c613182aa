"""Bootstrap of one role's new worktree, in order: marked, its files placed, its setup run."""

from __future__ import annotations

import os
from collections.abc import Mapping

from swarmforge import logfile
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.startsettings import BootstrapSettings
from swarmforge.swarm.bootstrap.commands import run_setup
from swarmforge.swarm.bootstrap.files import place
from swarmforge.swarm.bootstrap.marks import SetupFailure, clear, mark, stamp_now


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
        clear(root, role.name)  # nothing to do, and nothing left to retry
        return None
    interrupted = "up stopped before the setup finished"
    mark(root, SetupFailure(role.name, interrupted, log=log_path, at=stamp_now()), durable=False)
    with os.fdopen(logfile.open_log(log_path), "ab") as out:  # a FIFO there is refused

        def log(line: str) -> None:
            out.write(f"swarmforge bootstrap: {line}\n".encode())
            out.flush()

        place(root, role.path, settings, log)
    for command in settings.setup:
        found = run_setup(role, command, env, log_path, settings.timeout_seconds)
        if found is not None:
            mark(root, found)
            return found
    clear(root, role.name)
    return None
