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
from dataclasses import dataclass

import psutil

from swarmforge import events, tagging
from swarmforge.agents import hints, lifecycle
from swarmforge.agents import state as agentstate
from swarmforge.agents.lifecycle import AgentLife
from swarmforge.agents.state import Evidence, Report, StateRecord, Verdict
from swarmforge.config import sessionrecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, items_in
from swarmforge.layout import LOGS_DIR
from swarmforge.tmux import project_socket

# Agents whose screen shows a status line throughout a turn (agentstate.WORKING_MARKERS).
STATUS_LINE_AGENTS = ("codex",)
EVERY = 2.0  # seconds between two refreshes by a supervisor
REPORT_WINDOW = 64 * 1024  # the bytes at the end of a pane log searched for a status report


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _cpu(pid: int | None, table: tagging.ProcessTable | None = None) -> float | None:
    """The CPU seconds of the process tree of `pid` (descendants that exited are not counted),
    found in `table` when one is given."""
    if not pid:
        return None
    total = 0.0
    for process in tagging.tree(pid) if table is None else table.tree(pid):
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue  # ended while we looked
        total += times.user + times.system
    return total


def _log_path(root: str, role: str) -> str:
    return os.path.join(root, LOGS_DIR, f"{role}.log")


def _log_size(root: str, role: str) -> int | None:
    try:
        return os.stat(_log_path(root, role)).st_size
    except OSError:
        return None


def _log_tail(root: str, role: str, size: int) -> tuple[int, bytes] | None:
    """The last bytes of the role's log (up to REPORT_WINDOW of its `size`), and their offset."""
    start = max(0, size - REPORT_WINDOW)
    try:
        with open(_log_path(root, role), "rb") as f:
            f.seek(start)
            return start, f.read(REPORT_WINDOW)
    except OSError:
        return None


def log_report(
    root: str, role: str, before: StateRecord | None, log_size: int | None, now: float
) -> Report | None:
    """The last status report in the role's pane log, and since when it is known.

    An agent reports only a change, so during a long turn its report may fall behind
    the window that is read: the one the previous sample found stands until a new one.
    """
    old = before.report if before is not None else None
    tail = _log_tail(root, role, log_size) if log_size is not None else None
    if tail is None:
        return None
    start, data = tail
    found = agentstate.last_report(data, start)
    if found is None:
        return old if old is not None and old.offset < start else None
    if old is not None and (old.offset, old.state) == (found.offset, found.state):
        return old
    return Report(offset=found.offset, state=found.state, source=found.source, at=now)


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


def _screen(root: str, record: SessionRecord, role: RoleRecord) -> list[str] | None:
    """The lines the role's tmux pane shows; None without a pane or when it cannot be read."""
    if record.backend != "tmux":
        return None
    from swarmforge.tmux import Tmux

    try:
        return Tmux(project_socket(root)).capture(f"={role.session_name}:")
    except (SwarmforgeError, OSError):
        return None


def _working_on_screen(role: RoleRecord, screen: list[str] | None) -> bool | None:
    """Whether the screen shows the agent's status line of a turn; None if it cannot tell."""
    if screen is None or role.agent not in STATUS_LINE_AGENTS:
        return None
    return agentstate.working_line(screen) is not None


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


@dataclass(frozen=True)
class _Sample:
    """The evidence of one instant, and the activity samples and report to carry forward."""

    ev: Evidence
    cpu: float | None
    log_size: int | None
    report: Report | None


def _sample(
    root: str,
    record: SessionRecord,
    role: RoleRecord,
    life: AgentLife | None,
    before: StateRecord | None,
    now: float,
    table: tagging.ProcessTable | None = None,
) -> _Sample:
    pid = life.pid if life is not None else None
    cpu, log_size = _cpu(pid, table), _log_size(root, role.name)
    running = life is not None and life.state == "running"
    screen = _screen(root, record, role) if running else None
    report = log_report(root, role.name, before, log_size, now)
    ev = Evidence(
        life="none" if life is None else life.state,
        alive=tagging.is_alive(pid),
        exit_code=life.exit_code if life is not None and life.state == "exited" else None,
        started_at=_epoch(life.started_at) if life is not None else None,
        hint=hints.read_hint(root, role.name),
        report=report.hint() if report is not None else None,
        prompt_on_screen=agentstate.prompt_line(screen) if screen is not None else None,
        working_on_screen=_working_on_screen(role, screen),
        busy_since=_busy_since(role),
        active_at=_active_at(before, cpu, log_size, now),
    )
    return _Sample(ev, cpu, log_size, report)


def _since(before: StateRecord | None, verdict: Verdict, ev: Evidence, now: float) -> str:
    if before is not None and before.state == verdict.state:
        return before.since
    when = now
    word = agentstate.said(ev)
    if word is not None and word.state == verdict.state:
        when = min(now, word.at)  # the agent said so then
    return events.stamp(int(when * 1_000_000_000))


def refresh(
    root: str,
    record: SessionRecord,
    role: RoleRecord,
    stall_after: float,
    *,
    write: bool = True,
    table: tagging.ProcessTable | None = None,
) -> StateRecord:
    """Judge `role`'s state now; with `write`, record it (and an event when it changed).
    `table`: the process table to find the agent's processes in, shared by many roles."""
    now = time.time()
    life = lifecycle.load(root, role.name, record.run_id)
    if not write:
        before = agentstate.load_record(root, role.name, record.run_id)
        sample = _sample(root, record, role, life, before, now, table)
        unsampled = _Sample(sample.ev, None, None, sample.report)
        return _judged(role, record, before, unsampled, now, stall_after)
    with agentstate.lock(root, role.name):
        before = agentstate.load_record(root, role.name, record.run_id)
        sample = _sample(root, record, role, life, before, now, table)
        after = _judged(role, record, before, sample, now, stall_after)
        agentstate.save_record(root, after)
    agentstate.emit_change(root, before, after)
    return after


def _judged(
    role: RoleRecord,
    record: SessionRecord,
    before: StateRecord | None,
    sample: _Sample,
    now: float,
    stall_after: float,
) -> StateRecord:
    ev, cpu, log_size = sample.ev, sample.cpu, sample.log_size
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
        report=sample.report,
    )


def refresh_roles(root: str, names: tuple[str, ...], stall_after: float) -> None:
    """Record the state of each role of `names` in the project's run (a supervisor's step)."""
    record = sessionrecord.load(root)
    if record is None or record.state != "running":
        return
    table = tagging.ProcessTable()  # one walk of the process table for every role
    for role in record.roles:
        if role.name not in names:
            continue
        try:
            refresh(root, record, role, stall_after, table=table)
        except (SwarmforgeError, OSError, psutil.Error):
            continue  # evidence that cannot be read now is read at the next step
