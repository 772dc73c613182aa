"""An agent's state: starting, working, waiting, idle, stalled or exited, and since when.

Who writes what:

- The agent's own callbacks write a *hint* (agenthint.py), `.swarmforge/agents/<role>.hint.json`:
  claude's hooks (UserPromptSubmit and PreToolUse/PostToolUse: working; Notification:
  waiting for a person, or idle for its idle reminder; Stop: idle) and codex's
  `notify` program (agent-turn-complete: idle) call `swarmforge agent-state`. A hint
  is what the agent said last and when; it is never the state on its own.
- `refresh` combines the hint with the rest of the evidence (the lifecycle record
  for starting and exited, the tmux pane's screen for an approval prompt or dialog,
  the process tree's CPU time and the pane log's growth for activity, the mailbox's
  in-process item for work in hand) by the pure function `combine`, and records
  the state in `.swarmforge/agents/<role>.state.json`, with an `agent-state` event
  when it changed. The pane supervisor (tmux) and the headless runner refresh each
  role every few seconds, so a change is recorded near its time even when nobody
  looks; `status` computes the same state without writing anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from swarmforge import events, fsutil
from swarmforge.errors import CorruptFile
from swarmforge.layout import AGENTS_DIR
from swarmforge.locks import Exclusive
from swarmforge.records import read_json_model
from swarmforge.swarm.agenthint import Hint

State = Literal["starting", "working", "waiting", "idle", "stalled", "exited"]
STATES: tuple[State, ...] = ("starting", "working", "waiting", "idle", "stalled", "exited")
RECENT = 10.0  # seconds after its last activity that an agent without hooks counts as working
SETTLE = 3.0  # a screen still redrawing this long after a hint does not contradict it
BUSY_CPU = 0.1  # share of one core that counts as activity (an idle TUI uses less)
SCREEN_LINES = 25
# What an approval prompt, question or dialog shows, in claude's and codex's words.
PROMPTS = (
    "Do you want to",
    "Would you like to",
    "Do you trust",
    "Press enter to confirm",
    "Allow command?",
    "[y/N]",
    "[Y/n]",
    "(y/n)",
)


@dataclass(frozen=True)
class Evidence:
    """Everything known about one role's agent at one instant (epoch seconds)."""

    life: Literal["none", "running", "exited"]  # the lifecycle record
    alive: bool  # its process runs
    exit_code: int | None = None
    started_at: float | None = None
    hint: Hint | None = None
    hooks: bool = False  # the hints cover both sides of a turn (claude), not only its end
    prompt_on_screen: str | None = None  # the prompt's line, if the screen shows one
    busy_since: float | None = None  # an item is in process, claimed then
    active_at: float | None = None  # the last time its CPU time or its log grew


@dataclass(frozen=True)
class Verdict:
    """A combined state and the evidence that decided it."""

    state: State
    reason: str
    exit_code: int | None = None


def combine(ev: Evidence, now: float, stall_after: float) -> Verdict:
    """The state that the evidence `ev` shows at `now`; pure, so tests build the evidence."""
    if ev.life == "exited" or (ev.life == "running" and not ev.alive):
        return Verdict("exited", "its process has exited", ev.exit_code)
    if ev.life == "none":
        return Verdict("starting", "no start of its agent is recorded yet")
    hint = ev.hint if ev.hint is not None and ev.hint.at >= (ev.started_at or 0.0) else None
    if ev.prompt_on_screen is not None:
        return Verdict("waiting", f"its screen shows: {ev.prompt_on_screen.strip()}")
    active = ev.active_at is not None and (hint is None or ev.active_at > hint.at + SETTLE)
    if hint is not None and hint.state == "waiting" and not active:
        return Verdict("waiting", f"{hint.source} says it waits for a person")
    # Once its hooks say a turn ended, an idle screen's redraws are no work.
    quiet_screen = ev.hooks and hint is not None and hint.state == "idle"
    moments = [ev.started_at, ev.busy_since, hint.at if hint else None]
    if not quiet_screen:
        moments.append(ev.active_at)
    last = max((m for m in moments if m is not None), default=now)
    if ev.busy_since is not None and now - last > stall_after:
        return Verdict("stalled", f"an item is in process and nothing moved for {now - last:.0f} s")
    return _working_or_idle(ev, hint, now, active)


def _working_or_idle(ev: Evidence, hint: Hint | None, now: float, active: bool) -> Verdict:
    claimed_after = ev.busy_since is not None and (hint is None or ev.busy_since > hint.at)
    if hint is not None and hint.state == "working":
        return Verdict("working", f"{hint.source} says it works")
    if hint is not None and ev.hooks:
        return (
            Verdict("working", "it claimed an item after its turn ended")
            if claimed_after
            else Verdict("idle", f"{hint.source} says its turn ended")
        )
    recent = active and ev.active_at is not None and now - ev.active_at < RECENT
    if recent:
        return Verdict("working", "its processes or its screen are active")
    if claimed_after:
        return Verdict("working", "it has an item in process")
    if hint is not None:
        return Verdict("idle", f"{hint.source} says its turn ended")
    return Verdict("idle", "nothing is active")


def prompt_line(screen: list[str]) -> str | None:
    """The line of an approval prompt or dialog among a screen's last lines, if any."""
    for line in reversed(screen[-SCREEN_LINES:]):
        if any(marker in line for marker in PROMPTS):
            return line
    return None


def state_path(root: str, role: str) -> str:
    """Where the combined state of `role` is recorded."""
    return os.path.join(root, AGENTS_DIR, f"{role}.state.json")


class StateRecord(BaseModel):
    """The recorded state of one role, and the activity samples it was judged from."""

    model_config = ConfigDict(extra="forbid")

    role: str
    run_id: str
    state: State
    since: str
    reason: str = ""
    exit_code: int | None = None
    cpu: float | None = None  # the process tree's CPU seconds at `sampled_at`
    log_size: int | None = None
    sampled_at: float | None = None
    active_at: float | None = None


def load_record(root: str, role: str, run_id: str) -> StateRecord | None:
    """The recorded state of `role` in run `run_id`, or None."""
    try:
        found = read_json_model(state_path(root, role), StateRecord)
    except CorruptFile:
        return None  # rewritten by the next refresh
    return found if found is not None and found.run_id == run_id else None


def save_record(root: str, record: StateRecord) -> None:
    """Write the state of one role atomically."""
    path = state_path(root, record.role)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fsutil.atomic_write(path, (record.model_dump_json(indent=2) + "\n").encode(), durable=False)


def lock(root: str, role: str) -> Exclusive:
    """The short lock around one role's read-judge-write (the supervisor and a hook may race)."""
    return Exclusive(os.path.join(root, AGENTS_DIR, f"{role}.state.lock"), what="agent state")


def emit_change(root: str, before: StateRecord | None, after: StateRecord) -> None:
    """The `agent-state` event of a recorded change (none if the state did not change)."""
    if before is not None and before.state == after.state:
        return
    fields: dict[str, object] = {
        "role": after.role,
        "run_id": after.run_id,
        "state": after.state,
        "previous": before.state if before else None,
        "reason": after.reason,
    }
    if after.exit_code is not None:
        fields["exit_code"] = after.exit_code
    events.emit(root, "agent-state", fields)
