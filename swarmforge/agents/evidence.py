"""An agent's evidence at one instant: its process, its pane log and screen, its hint, its work.

What `refresh` (probe.py) judges a role's state from: the lifecycle record, the CPU
time of its process tree, the growth of its pane log and the last status report in
it, its tmux screen, the last hint of its callbacks and the item it has in process.
"""

from __future__ import annotations

import stat
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from swarmforge import fsutil, statedir, tagging, times
from swarmforge.agents.hints import read_hint
from swarmforge.agents.lifecycle import AgentLife
from swarmforge.agents.registry import agent
from swarmforge.agents.reports import Report, last_report
from swarmforge.agents.screen import prompt_line, working_line
from swarmforge.agents.state import Evidence
from swarmforge.agents.staterecord import StateRecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox, items_in
from swarmforge.layout import LOGS_DIR
from swarmforge.proc import liveness
from swarmforge.text import shown
from swarmforge.tmux.server import project_socket

REPORT_WINDOW = 64 * 1024  # the bytes at the end of a pane log searched for a status report


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return times.parse(stamp)
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


def _log_path(root: str, role: str) -> Path:
    return Path(statedir.path(root, LOGS_DIR), f"{role}.log")


def _log_size(root: str, role: str) -> int | None:
    """The size of the role's log; None without one, or where it is no regular file."""
    try:
        st = _log_path(root, role).stat()
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _log_tail(root: str, role: str) -> tuple[int, bytes] | None:
    """The last bytes of the role's log (up to REPORT_WINDOW), and their offset."""
    try:
        return fsutil.read_end(str(_log_path(root, role)), REPORT_WINDOW)
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
    tail = _log_tail(root, role) if log_size is not None else None
    if tail is None:
        return None
    start, data = tail
    found = last_report(data, start)
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
            claimed = Path(batches[0] if batches else items[0]).stat().st_mtime
        except OSError:
            claimed = time.time()
    return claimed


def _screen(root: str, record: SessionRecord, role: RoleRecord) -> list[str] | None:
    """The lines the role's tmux pane shows; None without a pane or when it cannot be read."""
    if record.backend != "tmux":
        return None
    from swarmforge.tmux.server import Tmux

    try:
        return Tmux(project_socket(root)).capture(f"={role.session_name}:")
    except (SwarmforgeError, OSError):
        return None


def _working_on_screen(role: RoleRecord, screen: list[str] | None) -> bool | None:
    """Whether the screen shows the agent's status line of a turn; None if it cannot tell."""
    markers = agent(role.agent).working_markers
    if screen is None or not markers:
        return None
    return working_line(screen, markers) is not None


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
class Sample:
    """The evidence of one instant, and the activity samples and report to carry forward."""

    ev: Evidence
    cpu: float | None
    log_size: int | None
    report: Report | None


def _gave_up(life: AgentLife | None) -> str | None:
    """Why an exited agent is left down, and the last line its screen showed; None if it is
    not."""
    if life is None or life.state != "exited" or life.gave_up is None:
        return None
    said = f"; its screen last showed: {shown(life.tail[-1].strip())}" if life.tail else ""
    return life.gave_up + said


def sample_of(
    root: str,
    record: SessionRecord,
    role: RoleRecord,
    life: AgentLife | None,
    before: StateRecord | None,
    now: float,
    table: tagging.ProcessTable | None = None,
) -> Sample:
    pid = life.pid if life is not None else None
    cpu, log_size = _cpu(pid, table), _log_size(root, role.name)
    running = life is not None and life.state == "running"
    screen = _screen(root, record, role) if running else None
    report = log_report(root, role.name, before, log_size, now)
    ev = Evidence(
        life="none" if life is None else life.state,
        alive=liveness.is_alive(pid),
        exit_code=life.exit_code if life is not None and life.state == "exited" else None,
        gave_up=_gave_up(life),
        started_at=_epoch(life.started_at) if life is not None else None,
        hint=read_hint(root, role.name),
        report=report.hint() if report is not None else None,
        prompt_on_screen=prompt_line(screen) if screen is not None else None,
        working_on_screen=_working_on_screen(role, screen),
        busy_since=_busy_since(role),
        active_at=_active_at(before, cpu, log_size, now),
    )
    return Sample(ev, cpu, log_size, report)
