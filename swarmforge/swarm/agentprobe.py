"""Gathering an agent's evidence and recording its state: `refresh` (see agentstate.py).

The pane supervisor (tmux) and the headless runner call `refresh` every few
seconds for their roles, and once more when a process exits; `status` calls it
with `write=False`, which judges from the last recorded activity sample and
writes nothing.
"""

from __future__ import annotations

import calendar
import os
import time

import psutil

from swarmforge import events
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, items_in
from swarmforge.handoff.notify import project_socket
from swarmforge.layout import LOGS_DIR
from swarmforge.swarm import agenthint, agentstate, lifecycle, runrecord, tagging
from swarmforge.swarm.agentstate import Evidence, StateRecord, Verdict
from swarmforge.swarm.lifecycle import AgentLife
from swarmforge.swarm.runrecord import RoleRecord, RunRecord

HOOKED_AGENTS = ("claude",)  # their hooks report both the start and the end of a turn
EVERY = 2.0  # seconds between two refreshes by a supervisor


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _cpu(pid: int | None) -> float | None:
    """The CPU seconds of the process tree of `pid` (descendants that exited are not counted)."""
    if not pid:
        return None
    total = 0.0
    for process in tagging.tree(pid):
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue  # ended while we looked
        total += times.user + times.system
    return total


def _log_size(root: str, role: str) -> int | None:
    try:
        return os.stat(os.path.join(root, LOGS_DIR, f"{role}.log")).st_size
    except OSError:
        return None


def _busy_since(role: RoleRecord) -> float | None:
    """When the item the role has in process was claimed; None without one."""
    box = Mailbox(role.path)
    batches = box.batches()
    items = items_in(batches[0]) if batches else box.items(Box.IN_PROCESS)
    if not items:
        return None
    try:
        claimed = _epoch(message.read(items[0]).get("dequeued_at"))
    except (OSError, CorruptFile):
        claimed = None
    if claimed is None:
        try:
            claimed = os.stat(batches[0] if batches else items[0]).st_mtime
        except OSError:
            claimed = time.time()
    return claimed


def _screen(root: str, record: RunRecord, role: RoleRecord) -> str | None:
    """The prompt line the role's tmux pane shows, if any."""
    if record.backend != "tmux":
        return None
    from swarmforge.swarm.tmux import Tmux

    try:
        screen = Tmux(project_socket(root)).capture(f"={role.session}:")
    except (SwarmforgeError, OSError):
        return None
    return agentstate.prompt_line(screen)


def _active_at(
    before: StateRecord | None, cpu: float | None, log_size: int | None, now: float
) -> float | None:
    """When the agent was last seen active: its CPU share or its log grew since the sample."""
    if before is None or before.sampled_at is None:
        return None
    span = max(now - before.sampled_at, 1e-3)
    spun = cpu is not None and before.cpu is not None and (cpu - before.cpu) / span >= 0.1
    grew = log_size is not None and before.log_size is not None and log_size > before.log_size
    return now if spun or grew else before.active_at


def _sample(
    root: str,
    record: RunRecord,
    role: RoleRecord,
    life: AgentLife | None,
    before: StateRecord | None,
    now: float,
) -> tuple[Evidence, float | None, int | None]:
    pid = life.pid if life is not None else None
    cpu, log_size = _cpu(pid), _log_size(root, role.name)
    running = life is not None and life.state == "running"
    ev = Evidence(
        life="none" if life is None else life.state,
        alive=tagging.is_alive(pid),
        exit_code=life.exit_code if life is not None and life.state == "exited" else None,
        started_at=_epoch(life.started_at) if life is not None else None,
        hint=agenthint.read_hint(root, role.name),
        hooks=role.agent in HOOKED_AGENTS,
        prompt_on_screen=_screen(root, record, role) if running else None,
        busy_since=_busy_since(role),
        active_at=_active_at(before, cpu, log_size, now),
    )
    return ev, cpu, log_size


def _since(before: StateRecord | None, verdict: Verdict, ev: Evidence, now: float) -> str:
    if before is not None and before.state == verdict.state:
        return before.since
    when = now
    if ev.hint is not None and ev.hint.state == verdict.state:
        when = min(now, ev.hint.at)  # the agent said so then
    return events.stamp(int(when * 1_000_000_000))


def refresh(
    root: str, record: RunRecord, role: RoleRecord, stall_after: float, *, write: bool = True
) -> StateRecord:
    """Judge `role`'s state now; with `write`, record it (and an event when it changed)."""
    now = time.time()
    life = lifecycle.load(root, role.name, record.run_id)
    if not write:
        before = agentstate.load_record(root, role.name, record.run_id)
        ev, _, _ = _sample(root, record, role, life, before, now)
        return _judged(role, record, before, ev, now, stall_after, None, None)
    with agentstate.lock(root, role.name):
        before = agentstate.load_record(root, role.name, record.run_id)
        ev, cpu, log_size = _sample(root, record, role, life, before, now)
        after = _judged(role, record, before, ev, now, stall_after, cpu, log_size)
        agentstate.save_record(root, after)
    agentstate.emit_change(root, before, after)
    return after


def _judged(
    role: RoleRecord,
    record: RunRecord,
    before: StateRecord | None,
    ev: Evidence,
    now: float,
    stall_after: float,
    cpu: float | None,
    log_size: int | None,
) -> StateRecord:
    verdict = agentstate.combine(ev, now, stall_after)
    sampled = cpu is not None or log_size is not None
    return StateRecord(
        role=role.name,
        run_id=record.run_id,
        state=verdict.state,
        since=_since(before, verdict, ev, now),
        reason=verdict.reason,
        exit_code=verdict.exit_code,
        cpu=cpu if sampled else (before.cpu if before else None),
        log_size=log_size if sampled else (before.log_size if before else None),
        sampled_at=now if sampled else (before.sampled_at if before else None),
        active_at=ev.active_at,
    )


def refresh_roles(root: str, names: tuple[str, ...], stall_after: float) -> None:
    """Record the state of each role of `names` in the project's run (a supervisor's step)."""
    record = runrecord.load(root)
    if record is None or record.state != "running":
        return
    for role in record.roles:
        if role.name not in names:
            continue
        try:
            refresh(root, record, role, stall_after)
        except (SwarmforgeError, OSError, psutil.Error):
            continue  # evidence that cannot be read now is read at the next step
