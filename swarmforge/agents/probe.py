"""Judging an agent's state from its evidence and recording it: `refresh` (see state.py).

The pane supervisor (tmux) and the headless runner call `refresh` every few
seconds for their roles, and once more when a process exits; `status` calls it
with `write=False`, which judges from the last recorded activity sample and
writes nothing.
"""

from __future__ import annotations

import time

import psutil

from swarmforge import tagging, times
from swarmforge.agents import lifecycle, staterecord
from swarmforge.agents.evidence import Sample, sample_of
from swarmforge.agents.state import Evidence, Verdict, combine, said
from swarmforge.agents.staterecord import StateRecord
from swarmforge.config import sessionrecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.errors import SwarmforgeError

EVERY = 2.0  # seconds between two refreshes by a supervisor


def _since(before: StateRecord | None, verdict: Verdict, ev: Evidence, now: float) -> str:
    if before is not None and before.state == verdict.state:
        return before.since
    when = now
    word = said(ev)
    if word is not None and word.state == verdict.state:
        when = min(now, word.at)  # the agent said so then
    return times.precise(int(when * 1_000_000_000))


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
        before = staterecord.load_record(root, role.name, record.run_id)
        sample = sample_of(root, record, role, life, before, now, table)
        unsampled = Sample(sample.ev, None, None, sample.report)
        return _judged(role, record, before, unsampled, now, stall_after)
    with staterecord.lock(root, role.name):
        before = staterecord.load_record(root, role.name, record.run_id)
        sample = sample_of(root, record, role, life, before, now, table)
        after = _judged(role, record, before, sample, now, stall_after)
        staterecord.save_record(root, after)
    staterecord.emit_change(root, before, after)
    return after


def _judged(
    role: RoleRecord,
    record: SessionRecord,
    before: StateRecord | None,
    sample: Sample,
    now: float,
    stall_after: float,
) -> StateRecord:
    ev, cpu, log_size = sample.ev, sample.cpu, sample.log_size
    verdict = combine(ev, now, stall_after)
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


# States in which an agent sits at its own prompt and may be given a line: idle, or
# stalled (an item in hand, nothing moving: it waits at its prompt, not for a person).
AT_PROMPT = ("idle", "stalled")


def not_at_prompt(root: str, role: str, stall_after: float) -> str | None:
    """Why `role`'s agent must not be typed into now (its state, and the reason), or None
    when it is at its idle prompt, or when no session record says anything of it."""
    record = sessionrecord.load(root)
    found = record.role(role) if record is not None else None
    if record is None or found is None:
        return None
    shown = refresh(root, record, found, stall_after, write=False)
    if shown.state in AT_PROMPT:
        return None
    return f"{shown.state}: {shown.reason}"
