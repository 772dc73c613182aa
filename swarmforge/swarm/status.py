"""`status`: what each role of the run is doing, read from the files and processes."""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass

from swarmforge import tagging, times
from swarmforge.agents import lifecycle, probe
from swarmforge.agents.lifecycle import AgentLife
from swarmforge.agents.tokens import Tokens
from swarmforge.config import sessionrecord
from swarmforge.config.alertsettings import StallSettings
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import load_settings
from swarmforge.daemon.budget import limits as budgetlimits
from swarmforge.daemon.budget.limits import Limits
from swarmforge.daemon.budget.spent import role_spent
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import running_pid
from swarmforge.errors import CorruptFile
from swarmforge.git import command
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, items_in
from swarmforge.proc import liveness
from swarmforge.swarm import disk
from swarmforge.swarm.bootstrap import SetupFailure, failure
from swarmforge.swarm.hoststatus import CrossHost, cross_host
from swarmforge.swarm.portholders import PortHolder, port_holders
from swarmforge.swarm.teardown import is_running
from swarmforge.tmux.server import project_socket


def _age(stamp: str | None, now: float) -> int | None:
    if not stamp:
        return None
    try:
        return int(now - times.parse(stamp))
    except ValueError:
        return None


@dataclass(frozen=True)
class Current:
    """The task or batch a role has in hand."""

    path: str
    count: int | None  # None when its first item cannot be read
    sender: str | None
    age_seconds: int | None

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "count": self.count,
            "from": self.sender,
            "age_seconds": self.age_seconds,
        }


@dataclass(frozen=True)
class Process:
    """A role's process as status shows it: running, exited (code, when, last lines), gone."""

    state: str  # running, exited, gone or stopped
    pid: int | None = None
    restarts: int | None = None  # None: no start of this process was ever recorded
    started_at: str | None = None
    exit_code: int | None = None
    exited_at: str | None = None
    last_lines: list[str] | None = None
    restart_at: str | None = None

    def as_json(self) -> dict[str, object]:
        """Only what is known: a process never recorded has a state and nothing else."""
        if self.restarts is None:
            return {"state": self.state}
        shown: dict[str, object] = {
            "state": self.state,
            "pid": self.pid,
            "restarts": self.restarts,
            "started_at": self.started_at,
        }
        if self.exit_code is not None:
            shown |= {
                "exit_code": self.exit_code,
                "exited_at": self.exited_at,
                "last_lines": self.last_lines,
            }
        if self.state == "exited":
            shown["restart_at"] = self.restart_at
        return shown


@dataclass(frozen=True)
class AgentState:
    """A role's agent state (agents/state.py): what it does, since when, and why we think so."""

    state: str  # starting, working, waiting, idle, stalled or exited
    since: str
    reason: str
    exit_code: int | None = None

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class RoleStatus:
    """Everything `status` shows about one role."""

    role: str
    agent: str
    worktree: str
    path: str
    branch: str
    port: int
    mode: str
    alive: bool
    process: Process
    queued: int
    current: Current | None
    dirty_files: int | None
    failed_items: int
    undeliverable: int
    worktree_missing: bool
    agent_state: AgentState | None = None  # None while the run is stopped
    tokens: Tokens | None = None  # spent since the run started; None: not known for its agent
    budget: int | None = None  # the tokens it may spend in the run; None: no budget
    setup_failed: SetupFailure | None = None  # its worktree's setup failed: not started
    port_conflict: PortHolder | None = None  # who else listens on its port, if anyone
    disk_bytes: int | None = None  # its worktree's size; None: not measured, or the main checkout

    def as_json(self) -> dict[str, object]:
        shown = asdict(self)
        shown["process"] = self.process.as_json()
        shown["agent_state"] = self.agent_state.as_json() if self.agent_state else None
        shown["current"] = self.current.as_json() if self.current else None
        shown["tokens"] = self.tokens.as_json() if self.tokens else None
        return shown


@dataclass(frozen=True)
class SwarmStatus:
    """The run's state and every role's."""

    project: str
    run_id: str | None
    state: str  # none, running or stopped
    daemon: int | None
    roles: list[RoleStatus]
    rescues: list[str]
    backend: str | None = None
    live: bool = False
    runner_pid: int | None = None
    tmux_socket: str | None = None
    budget: int | None = None  # the tokens every role together may spend in the run
    cross: CrossHost | None = None  # with [transport]: the other hosts and their roles

    def as_json(self) -> dict[str, object]:
        """The shape `swarmforge status --json` prints."""
        shown: dict[str, object] = {"project": self.project, "run_id": self.run_id}
        if self.run_id is not None:
            shown |= {
                "backend": self.backend,
                "state": self.state,
                "live": self.live,
                "runner_pid": self.runner_pid,
                "tmux_socket": self.tmux_socket,
            }
        else:
            shown["state"] = self.state
        shown |= {
            "daemon": self.daemon,
            "roles": [role.as_json() for role in self.roles],
            "rescues": self.rescues,
            "budget": self.budget,
        }
        if self.cross is not None:
            self.cross.extend_json(shown, [role.as_json() for role in self.roles])
        return shown


def _current(box: Mailbox, now: float) -> Current | None:
    batches = box.batches()
    items = items_in(batches[0]) if batches else box.items(Box.IN_PROCESS)
    if not items:
        return None
    path = batches[0] if batches else items[0]
    try:
        first = message.read(items[0])
    except (OSError, CorruptFile):
        return Current(path, None, None, None)
    return Current(path, len(items), first.get("from"), _age(first.get("dequeued_at"), now))


def _failed_items(box: Mailbox) -> int:
    count = 0
    completed = box.path(Box.COMPLETED)
    for path in items_in(completed) + [p for b in _dirs(completed) for p in items_in(b)]:
        try:
            count += message.read(path).get("outcome") == "failed"
        except (OSError, CorruptFile):
            continue
    return count


def _dirs(directory: str) -> list[str]:
    try:
        return [e.path for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def _dirty(path: str) -> int | None:
    # --no-optional-locks: a plain status takes the worktree's index lock to refresh the
    # index, and the role's own `git add` or commit then fails meanwhile.
    result = command.run(path, "--no-optional-locks", "status", "--porcelain")
    return len(result.stdout.splitlines()) if result.ok else None


def _disk(root: str, role: RoleRecord) -> int | None:
    """A role worktree's disk use; None for the main checkout, which is the user's own and
    holds every worktree besides: measuring it would cost a walk of the whole project."""
    if disk.in_main_checkout(root, role):
        return None
    return disk.worktree_bytes(role.path)


def _alive(root: str, record: SessionRecord, role: RoleRecord, life: AgentLife | None) -> bool:
    if life is not None and life.state == "exited":
        return False
    if life is not None and record.backend == "tmux":
        return liveness.is_alive(life.pid)
    if record.backend == "headless":
        return liveness.is_alive(role.pid)
    from swarmforge.tmux.server import Tmux

    tmux = Tmux(project_socket(root))
    return liveness.is_alive(tmux.pane_pid(role.session_name))


def _process(life: AgentLife | None, alive: bool) -> Process:
    if life is None:
        return Process("running" if alive else "gone")
    state = "running" if alive else "exited" if life.state == "exited" else "gone"
    exited = life.exit_code is not None
    return Process(
        state,
        pid=life.pid,
        restarts=life.restarts,
        started_at=life.started_at,
        exit_code=life.exit_code,
        exited_at=life.exited_at if exited else None,
        last_lines=life.tail if exited else None,
        restart_at=life.restart_at if life.state == "exited" else None,
    )


def rescues(root: str) -> list[str]:
    """Refs holding uncommitted work saved when worktrees were removed, of every run."""
    result = command.run(root, "for-each-ref", "--format=%(refname)", "refs/swarmforge/rescue/")
    return result.stdout.decode().split() if result.ok else []


def _agent_state(
    root: str,
    record: SessionRecord,
    role: RoleRecord,
    stall_after: float,
    table: tagging.ProcessTable | None,
) -> AgentState | None:
    if record.state != "running":
        return None
    judged = probe.refresh(root, record, role, stall_after, write=False, table=table)
    return AgentState(judged.state, judged.since, judged.reason, judged.exit_code)


def stall_seconds(root: str) -> float:
    """The project's stall threshold; the default when swarmforge.toml cannot be read."""
    try:
        return load_settings(root).stall.seconds
    except CorruptFile:
        return StallSettings().seconds  # `up` names the fault; a status view still works


def budgets(root: str) -> Limits:
    """The project's token budgets; none when swarmforge.toml cannot be read."""
    try:
        return budgetlimits.limits(root)
    except CorruptFile:
        return Limits()  # `up` names the fault; a status view still works


def role_status(
    root: str,
    record: SessionRecord,
    role: RoleRecord,
    now: float,
    stall_after: float | None = None,
    limits: Limits | None = None,
    port_conflict: PortHolder | None = None,
    sizes: bool = False,
    table: tagging.ProcessTable | None = None,
) -> RoleStatus:
    """Everything `status` shows about one role (`port_conflict` from `port_holders`;
    `table`: the process table shared by every role of one read)."""
    box = Mailbox(role.path)
    exists = os.path.isdir(role.path)
    life = lifecycle.load(root, role.name, record.run_id)
    alive = record.state == "running" and _alive(root, record, role, life)
    return RoleStatus(
        role=role.name,
        agent=role.agent,
        worktree=role.worktree,
        path=role.path,
        branch=role.branch,
        port=role.port,
        mode=role.mode,
        alive=alive,
        process=_process(life, alive) if record.state == "running" else Process("stopped"),
        queued=len(box.items(Box.NEW)),
        current=_current(box, now),
        dirty_files=_dirty(role.path) if exists else None,
        failed_items=_failed_items(box),
        undeliverable=len([n for n in _names(box.path(Box.FAILED)) if n.endswith(".error")]),
        worktree_missing=not exists,
        agent_state=_agent_state(
            root, record, role, stall_seconds(root) if stall_after is None else stall_after, table
        ),
        tokens=role_spent(root, record, role),
        budget=(budgets(root) if limits is None else limits).role(role.name),
        setup_failed=failure(root, role.name),
        port_conflict=port_conflict,
        disk_bytes=_disk(root, role) if sizes else None,
    )


def _names(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []


def status(root: str, sizes: bool = False, hosts: bool = False) -> SwarmStatus:
    """The run's state and every role's; with `sizes`, each worktree's disk use too; with
    `hosts` and `[transport]`, the roles of the swarm's other hosts.

    Measuring a worktree reads every file's metadata (about 0.1 s for 20,000 files), and
    asking the NATS server takes a round trip or a timeout: too slow for the live views,
    which call this whenever the swarm changes (and ask the server on a timer of their
    own); `swarmforge status` asks for both.
    """
    root = os.path.realpath(root)
    record = sessionrecord.load(root)
    daemon = running_pid(Paths(root))
    if record is None:
        return SwarmStatus(
            root,
            None,
            "none",
            daemon,
            [],
            rescues(root),
            budget=budgets(root).swarm,
            cross=cross_host(root, None) if hosts else None,
        )
    now = time.time()
    stall_after = stall_seconds(root)
    limits = budgets(root)
    held = port_holders(root, record)
    table = tagging.ProcessTable()  # walked once for every role's agent, not once per role
    return SwarmStatus(
        project=root,
        run_id=record.run_id,
        state=record.state,
        daemon=daemon,
        roles=[
            role_status(root, record, r, now, stall_after, limits, held.get(r.name), sizes, table)
            for r in record.roles
        ],
        rescues=rescues(root),
        backend=record.backend,
        live=is_running(root, record),
        runner_pid=record.runner_pid,
        tmux_socket=project_socket(root) if record.backend == "tmux" else None,
        budget=limits.swarm,
        cross=cross_host(root, record) if hosts else None,
    )
