"""`up`: start every role of swarmforge.conf in its worktree, or resume the session.

`up` is idempotent and resumes: the session record keeps the run id, so the same
worktrees, branches, ports and queues are found again. What a run starts is
tagged with its id, so `down` (and `gc`, after a killed runner) ends it all.
"""

from __future__ import annotations

import os
from typing import Literal

from swarmforge import events, times
from swarmforge.config import sessionlock, sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.roster import SwarmConfig
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import load_settings
from swarmforge.errors import SwarmforgeError
from swarmforge.git.project import ensure_first_commit
from swarmforge.swarm import hosts, placement, rolecommand, shims
from swarmforge.swarm.bootstrap import marks
from swarmforge.swarm.session.down import down_held
from swarmforge.swarm.session.launch import STAGGER, start, start_tmux
from swarmforge.swarm.session.progress import Progress, quiet
from swarmforge.swarm.session.resume import plan
from swarmforge.swarm.teardown import is_running

Backend = Literal["tmux", "headless"]


def _backend(name: str) -> Backend:
    if name == "tmux":
        return "tmux"
    if name == "headless":
        return "headless"
    raise SwarmforgeError(f"Unknown backend '{name}': use tmux or headless.")


def up(
    root: str,
    backend: str | None = None,
    *,
    stagger: float | None = None,
    inhibit_sleep: bool = False,
    role_env: dict[str, dict[str, str]] | None = None,
    host: str | None = None,
    progress: Progress = quiet,
) -> tuple[SessionRecord, bool]:
    """Start (or resume) the swarm of the project at `root`; (record, True if it already ran).

    `role_env` adds variables to the environment of named roles' processes (a
    rehearsal points agents at its own homes and model this way). `host`: start the
    roles swarmforge.toml places on that host (None: those placed on no host). If
    starting fails half-way, what was started is stopped again before the error is raised.
    It holds the session lock throughout: another `up`, `down` or `gc` of the project
    waits a moment for it, then is refused.
    """
    root = os.path.realpath(root)
    whole = load_config(root)
    # A broken swarmforge.toml stops `up` before anything runs.
    settings = load_settings(root, whole.names)
    config, remote = hosts.split(whole, settings, host)
    with sessionlock.starting_or_stopping(root):
        record = sessionrecord.load(root)
        if record is not None and record.state == "running" and record.host != host:
            ran = f"host {record.host}" if record.host else "the host without --host"
            raise SwarmforgeError(
                f"This checkout runs the roles of {ran}.",
                hint="Use another clone for each host, or `swarmforge down` first.",
            )
        if record is not None and record.state == "running" and is_running(root, record):
            _set_up_again(root, whole, record, stagger, progress)
            return record, True
        # Before anything is made: a server that does not answer is said now, in one line.
        leased = hosts.reach(root, settings.transport, host) if settings.transport else frozenset()
        ensure_first_commit(root)
        if record is not None and record.state == "running":
            from swarmforge.swarm.cleanup import gc_held

            progress("cleaning up after a runner that was killed")
            gc_held(root)
        chosen = _backend(backend or (record.backend if record else "tmux"))
        run_id, planned = plan(root, config, record, role_env or {}, leased, progress)
        record = SessionRecord(
            run_id=run_id,
            project=root,
            backend=chosen,
            state="stopped",
            started_at=times.stamp(),
            roles=planned,
            host=host,
            remote=remote,
        )
        _make(root, whole, config, record, progress)
        try:
            # The whole swarm: its roles' commands and settings are checked against all of it.
            start(root, whole, record, stagger, inhibit_sleep, progress)
        except BaseException as exc:
            progress(f"starting failed ({_reason(exc)}): stopping what was started")
            down_held(root, False, quiet)
            raise
        return sessionrecord.load(root) or record, False


def _make(
    root: str, whole: SwarmConfig, config: SwarmConfig, record: SessionRecord, progress: Progress
) -> None:
    """Record the run, then make its worktrees and files, then record it running."""
    # Recorded before any worktree is made: an `up` killed from here on leaves a run
    # that the next `up` resumes and `down --purge` removes, never worktrees of no run.
    # The session lock is held and the runner not started yet: nobody else writes it.
    sessionrecord.save(root, record)
    placement.create_worktrees(root, record.roles, record.run_id, progress)
    placement.write_roles_tsv(root, whole, record.roles, record.remote)
    rolecommand.write_instructions(root, config)
    shims.write(root)
    record.state = "running"
    sessionrecord.save(root, record)
    # Before the processes start: their own events (agent-started) follow it.
    fields = {"run_id": record.run_id, "backend": record.backend}
    events.emit(root, "swarm-up", {**fields, "roles": [role.name for role in record.roles]})


def _set_up_again(
    root: str, config: SwarmConfig, record: SessionRecord, stagger: float | None, progress: Progress
) -> None:
    """On a running swarm, bootstrap again every role whose setup failed, and start the
    agents of those that now succeed (the headless runner starts them on its own)."""
    failed = marks.failures(root, [role.name for role in record.roles])
    if not failed:
        return
    names = {found.role for found in failed}
    progress(f"setting up again: {', '.join(sorted(names))}")
    placement.create_worktrees(
        root, [r for r in record.roles if r.name in names], record.run_id, progress
    )
    if record.backend == "tmux" and marks.ready(root, [r for r in record.roles if r.name in names]):
        # Only sessions that do not exist yet are made: the running roles are left alone.
        start_tmux(root, config, record, STAGGER["tmux"] if stagger is None else stagger, progress)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SwarmforgeError):
        return exc.message
    return type(exc).__name__
