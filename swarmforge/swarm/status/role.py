"""Everything `status` shows about one role, read from its files and processes."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from swarmforge import tagging
from swarmforge.agents import lifecycle, probe, statefiles
from swarmforge.agents.tokens import Tokens
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.daemon.budget import limits, spent
from swarmforge.git import command
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.statedir import git_dir_of
from swarmforge.swarm import disk
from swarmforge.swarm.bootstrap.marks import SetupFailure, failure
from swarmforge.swarm.portholders import PortHolder
from swarmforge.swarm.status.limits import budgets, stall_seconds
from swarmforge.swarm.status.process import Process, role_alive, shown_process
from swarmforge.swarm.status.work import Current, count_failed, in_hand, names_in


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
    # Where HEAD is when it is not on the role's branch: another branch, or "detached at
    # <commit>"; None when it is on it, or for a role in the main checkout.
    off_branch: str | None = None
    # Its state files that cannot be read (a FIFO, a huge file), each in a sentence.
    unreadable: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        shown = asdict(self)
        shown["process"] = self.process.as_json()
        shown["agent_state"] = self.agent_state.as_json() if self.agent_state else None
        shown["current"] = self.current.as_json() if self.current else None
        shown["tokens"] = self.tokens.as_json() if self.tokens else None
        return shown


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


def role_status(
    root: str,
    record: SessionRecord,
    role: RoleRecord,
    now: float,
    stall_after: float | None = None,
    limits: limits.Limits | None = None,
    port_conflict: PortHolder | None = None,
    sizes: bool = False,
    table: tagging.ProcessTable | None = None,
) -> RoleStatus:
    """Everything `status` shows about one role (`port_conflict` from `port_holders`;
    `table`: the process table shared by every role of one read)."""
    box = Mailbox(role.path)
    exists = Path(role.path).is_dir()
    life = lifecycle.load(root, role.name, record.run_id)
    alive = record.state == "running" and role_alive(root, record, role, life)
    return RoleStatus(
        role=role.name,
        agent=role.agent,
        worktree=role.worktree,
        path=role.path,
        branch=role.branch,
        port=role.port,
        mode=role.mode,
        alive=alive,
        process=shown_process(life, alive) if record.state == "running" else Process("stopped"),
        queued=len(box.items(Box.NEW)),
        current=in_hand(box, now),
        dirty_files=_dirty(role.path) if exists else None,
        failed_items=count_failed(box),
        undeliverable=len([n for n in names_in(box.path(Box.FAILED)) if n.endswith(".error")]),
        worktree_missing=not exists,
        agent_state=_agent_state(
            root, record, role, stall_seconds(root) if stall_after is None else stall_after, table
        ),
        tokens=spent.role_spent(root, record, role),
        budget=(budgets(root) if limits is None else limits).role(role.name),
        setup_failed=failure(root, role.name),
        port_conflict=port_conflict,
        disk_bytes=_disk(root, role) if sizes else None,
        off_branch=off_branch(role) if exists else None,
        unreadable=tuple(statefiles.unreadable(root, role.name)),
    )


def off_branch(role: RoleRecord) -> str | None:
    """Where the role's HEAD is, if not on its branch (read from git's files, no git run).

    An agent's `git checkout <commit>`, a rebase or a bisect leaves HEAD elsewhere: its
    commits there belong to no branch of the swarm's until it comes back.
    """
    if role.worktree in ("master", "none"):
        return None  # the main checkout's branch is the user's to choose
    git_dir = git_dir_of(role.path)
    if git_dir is None:
        return None
    try:
        head = Path(git_dir, "HEAD").read_text(errors="replace").strip()
    except OSError:
        return None
    if head == f"ref: refs/heads/{role.branch}":
        return None
    if head.startswith("ref: refs/heads/"):
        return f"on {head.removeprefix('ref: refs/heads/')}"
    return f"detached at {head[:10]}"
