"""`up` and `down`: start every role of swarmforge.conf in its worktree, and stop all of it.

`up` is idempotent and resumes: the session record keeps the run id, so the same
worktrees, branches, ports and queues are found again. What a run starts is
tagged with its id, so `down` (and `gc`, after a killed runner) ends it all.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import Literal

from swarmforge import events, tagging, times
from swarmforge.config import rolerecord, sessionlock, sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.roster import SwarmConfig
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import load_settings
from swarmforge.daemon import starting, stopping
from swarmforge.errors import SwarmforgeError
from swarmforge.git import names, removing, worktrees
from swarmforge.git.project import ensure_first_commit
from swarmforge.layout import REMOTE_TSV, ROLES_TSV, RUNNER_LOCK, RUNNER_PID
from swarmforge.locks import is_held
from swarmforge.ports import port_for, project_identity
from swarmforge.proc import detach
from swarmforge.swarm import bootstrap, hosts, placement, ramp, rolecommand, shims
from swarmforge.swarm.teardown import is_running, record_stopped, stop_processes
from swarmforge.waiting import wait_until

Progress = Callable[[str], None]
Backend = Literal["tmux", "headless"]
STAGGER = {"tmux": 1.0, "headless": 0.0}
START_TIMEOUT = 15.0


def _quiet(message: str) -> None:
    pass


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
    progress: Progress = _quiet,
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
        run_id, planned = _plan(root, config, record, role_env or {}, leased, progress)
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
            _start(root, whole, record, stagger, inhibit_sleep, progress)
        except BaseException as exc:
            progress(f"starting failed ({_reason(exc)}): stopping what was started")
            _down(root, False, _quiet)
            raise
        return sessionrecord.load(root) or record, False


def _plan(
    root: str,
    config: SwarmConfig,
    previous: SessionRecord | None,
    role_env: dict[str, dict[str, str]],
    leased: frozenset[int],
    progress: Progress,
) -> tuple[str, list[RoleRecord]]:
    """The run id (the recorded run's, when there is one) and where each role will work."""
    unrecorded = None if previous else _unrecorded_run(root, config)
    run_id = previous.run_id if previous else unrecorded or placement.new_run_id()
    progress(f"{'resuming' if previous or unrecorded else 'starting'} run {run_id}")
    recorded = _recorded_ports(previous)
    planned = placement.plan(root, config, run_id, role_env, recorded, leased)
    _say_moved_ports(root, planned, recorded, progress)
    rolecommand.check_instructions(root, planned)
    return run_id, planned


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
    failed = bootstrap.failures(root, [role.name for role in record.roles])
    if not failed:
        return
    names = {found.role for found in failed}
    progress(f"setting up again: {', '.join(sorted(names))}")
    placement.create_worktrees(
        root, [r for r in record.roles if r.name in names], record.run_id, progress
    )
    if record.backend == "tmux" and bootstrap.ready(
        root, [r for r in record.roles if r.name in names]
    ):
        # Only sessions that do not exist yet are made: the running roles are left alone.
        _start_tmux(root, config, record, STAGGER["tmux"] if stagger is None else stagger, progress)


def _recorded_ports(record: SessionRecord | None) -> dict[str, int]:
    """Each branch's port as the session record keeps it: a resumed role keeps its port."""
    return {role.branch: role.port for role in record.roles} if record else {}


def _say_moved_ports(
    root: str, planned: list[RoleRecord], recorded: dict[str, int], progress: Progress
) -> None:
    """Name every role given a port other than its home port or its recorded one, and why."""
    project = project_identity(root)
    for role in planned:
        home = port_for(role.branch, project)
        if role.port not in (home, recorded.get(role.branch)):
            progress(
                f"role {role.name} gets port {role.port}: "
                f"port {recorded.get(role.branch, home)} is another role's or in use"
            )


def _unrecorded_run(root: str, config: SwarmConfig) -> str | None:
    """The run whose role worktrees an `up` made before it recorded the run, if they agree.

    Only an `up` from before runs were recorded first can have left such worktrees.
    """
    wanted = {role.worktree for role in config.roles if not role.in_main_checkout}
    found = set()
    for tree in worktrees.list_worktrees(root):
        parts = (tree.branch or "").split("/")
        if (
            tree.name in wanted
            and len(parts) == 3
            and parts[0::2] == [names.BRANCH_PREFIX, tree.name]
        ):
            found.add(parts[1])
    return found.pop() if len(found) == 1 else None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SwarmforgeError):
        return exc.message
    return type(exc).__name__


def _start(
    root: str,
    config: SwarmConfig,
    record: SessionRecord,
    stagger: float | None,
    inhibit_sleep: bool,
    progress: Progress,
) -> None:
    tag_env = tagging.tags(record.run_id, root)
    if inhibit_sleep:
        record.inhibitor_pid = _start_inhibitor(tag_env)
        sessionrecord.save(root, record)
    kind = "tmux" if record.backend == "tmux" else "none"
    pid, _ = starting.start(root, ["--notify", kind], env=tag_env)
    progress(f"delivery daemon running (pid {pid})")
    if record.backend == "tmux":
        pause = STAGGER["tmux"] if stagger is None else stagger
        _start_tmux(root, config, record, pause, progress)
    else:
        # The runner records its own pid and its roles' pids in the session record.
        since = time.time()
        progress(f"runner started (pid {_start_runner(root, tag_env)})")
        # The runner paces its agents' starts itself; `up` tells how far it got.
        agents = [role.name for role in bootstrap.ready(root, record.roles) if not role.is_exec]
        caps = load_settings(root).start
        running = partial(is_held, os.path.join(root, RUNNER_LOCK))
        ramp.follow(root, record.run_id, agents, caps, since, running, progress)


def _start_tmux(
    root: str, config: SwarmConfig, record: SessionRecord, stagger: float, progress: Progress
) -> None:
    from swarmforge.tmux.server import Tmux, project_socket
    from swarmforge.tmux.spec import SessionSpec

    tmux = Tmux(project_socket(root))
    specs = []
    for role in bootstrap.ready(root, record.roles):  # a setup-failed role is not started
        # Only the role's own variables: the panes inherit the rest from the server,
        # and tmux refuses commands longer than about 16 KB.
        env = rolerecord.role_vars(root, record.run_id, role)
        # Checked here, so that a missing agent stops `up` before any session starts.
        rolecommand.command(
            root, config, role, rolerecord.role_env(root, record.run_id, role), "tmux"
        )
        argv = [sys.executable, "-m", "swarmforge", "pane", "--project", root, role.name]
        # An exec role's loop keeps its own log; an agent's screen is the log.
        log = None if role.is_exec else placement.log_file(root, role.name)
        specs.append(SessionSpec(role.session_name, role.path, argv, env, log))
    # Agents start as `[start]` allows; exec roles run plain commands and are not paced.
    agents = {role.session_name: role.name for role in record.roles if not role.is_exec}
    missing = [spec for spec in specs if spec.name in agents and not tmux.has_session(spec.name)]
    caps = load_settings(root).start
    pacer = ramp.Pacer(root, record.run_id, caps, len(missing), progress)

    def gate(spec: SessionSpec) -> None:
        if spec.name in agents:
            pacer.wait()
            pacer.started(agents[spec.name])

    for name in tmux.start_all(specs, stagger, gate=gate):
        progress(f"started tmux session {name}")


def _start_runner(root: str, tag_env: dict[str, str]) -> int:
    argv = [sys.executable, "-m", "swarmforge", "supervise", "--project", root]
    with open(placement.log_file(root, "runner"), "ab") as log:
        detach.detach(argv, cwd=root, extra=tag_env, log=log.fileno())
    pid_file = os.path.join(root, RUNNER_PID)
    lock = os.path.join(root, RUNNER_LOCK)
    if wait_until(lambda: is_held(lock) and os.path.exists(pid_file), START_TIMEOUT):
        with open(pid_file, encoding="ascii") as f:
            return int(f.read().strip())
    raise SwarmforgeError(
        "The swarm runner did not start.", hint=f"See {placement.log_file(root, 'runner')}."
    )


def _start_inhibitor(tag_env: dict[str, str]) -> int | None:
    from swarmforge.proc.awake import sleep_inhibitor_argv

    argv = sleep_inhibitor_argv()
    if argv is None:
        return None
    return detach.detach(argv, extra=tag_env)


def _purge(
    root: str, record: SessionRecord, progress: Progress
) -> tuple[list[str], dict[str, str | None]]:
    """Remove the run's worktrees and forget the run; the worktrees removed, and per role
    the commit that saved its uncommitted work."""
    removed, rescued = [], {}
    for role in record.roles:
        if role.worktree in ("master", "none"):
            continue
        removal = removing.remove(
            root, role.worktree, rescue_ref=names.rescue_ref(record.run_id, role.worktree)
        )
        rescued[role.name] = removal.rescued
        if removal.removed:
            removed.append(role.worktree)
            saved = (
                f" (uncommitted work saved as {removal.rescued[:10]})" if removal.rescued else ""
            )
            progress(f"removed worktree {role.worktree}{saved}")
    sessionrecord.remove(root)
    for table in (REMOTE_TSV, ROLES_TSV):
        if os.path.exists(os.path.join(root, table)):
            os.unlink(os.path.join(root, table))
    return removed, rescued


@dataclass(frozen=True)
class Stopped:
    """What `down` did."""

    run_id: str | None  # None: no swarm was ever started here
    stopped: list[int]  # the processes ended
    daemon: int | None
    purged: bool
    removed: list[str]  # the worktrees removed (with purge)
    rescued: dict[str, str | None]  # per role, the commit saving its uncommitted work

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def down(root: str, *, purge: bool = False, progress: Progress = _quiet) -> Stopped:
    """Stop everything the run started; with `purge`, remove its worktrees (work rescued)."""
    root = os.path.realpath(root)
    with sessionlock.starting_or_stopping(root):
        return _down(root, purge, progress)


def _down(root: str, purge: bool, progress: Progress) -> Stopped:
    """`down`, by a caller that holds the session lock."""
    record = sessionrecord.load(root)
    ended = stop_processes(root, record)
    daemon = stopping.stop(root)
    progress(f"stopped {len(ended)} process(es)" + (f", daemon {daemon}" if daemon else ""))
    rescued: dict[str, str | None] = {}
    removed: list[str] = []
    if record is not None:
        # Before the record says stopped: `events --follow` ends on that, after this event.
        fields = {"run_id": record.run_id, "stopped": len(ended), "purge": purge}
        events.emit(root, "swarm-down", fields)
    if purge and record is not None:
        removed, rescued = _purge(root, record, progress)
    elif record is not None:
        record_stopped(root)
    return Stopped(record.run_id if record else None, ended, daemon, purge, removed, rescued)
