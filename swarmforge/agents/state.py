"""An agent's state: starting, working, waiting, idle, stalled or exited, and since when.

Who writes what:

- The agent's own callbacks write a *hint* (hints.py), `.swarmforge/agents/<role>.hint.json`:
  claude's hooks (UserPromptSubmit and PreToolUse/PostToolUse: working; Notification:
  waiting for a person, or idle for its idle reminder; Stop: idle), codex's hooks
  when it is given them (UserPromptSubmit, PreToolUse, PostToolUse: working;
  PermissionRequest: waiting; Stop: idle) and codex's `notify` program
  (agent-turn-complete: idle) call `swarmforge agent-state`. A hint is what the
  agent said last and when; it is never the state on its own.
- codex also reports its state to its terminal, in the pane log (an OSC 7501
  "program status", reports.py: working, blocked (waiting), idle or done), whenever it changes;
  the last report is such a word too, known from when it was first seen. codex's
  hooks, when they speak, say the same more precisely; its notify program is
  heard only when neither does (it also fires for codex's side threads).
- `refresh` (probe.py) combines that word with the rest of the evidence (evidence.py:
  the lifecycle record for starting and exited, the tmux pane's screen (screen.py)
  for an approval prompt or dialog and for codex's status line while it works, the
  process tree's CPU time and the pane log's growth for activity, the mailbox's
  in-process item for work in hand)
  by the pure function `combine`, and records the state (staterecord.py) in
  `.swarmforge/agents/<role>.state.json`, with an `agent-state` event when it
  changed. The pane supervisor (tmux) and the headless runner refresh each role
  every few seconds, so a change is recorded near its time even when nobody looks;
  `status` computes the same state without writing anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from swarmforge.agents.hints import Hint

State = Literal["starting", "working", "waiting", "idle", "stalled", "exited"]
STATES: tuple[State, ...] = ("starting", "working", "waiting", "idle", "stalled", "exited")
RECENT = 10.0  # seconds after its last activity that an agent without hooks counts as working
SETTLE = 3.0  # a screen still redrawing this long after a hint does not contradict it
BUSY_CPU = 0.1  # share of one core that counts as activity (an idle TUI uses less)


@dataclass(frozen=True)
class Evidence:
    """Everything known about one role's agent at one instant (epoch seconds)."""

    life: Literal["none", "running", "exited"]  # the lifecycle record
    alive: bool  # its process runs
    exit_code: int | None = None
    # Why an exited agent is left down after its quick exits, with its screen's last line.
    gave_up: str | None = None
    started_at: float | None = None
    hint: Hint | None = None  # the last word of its callbacks (hints.py)
    report: Hint | None = None  # the last status report on its terminal, when first seen
    prompt_on_screen: str | None = None  # the prompt's line, if the screen shows one
    # Its screen shows its working status line; None when the screen cannot tell (no
    # screen, or an agent whose status line is not known).
    working_on_screen: bool | None = None
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
        return Verdict("exited", ev.gave_up or "its process has exited", ev.exit_code)
    if ev.life == "none":
        return Verdict("starting", "no start of its agent is recorded yet")
    hint = said(ev)
    if ev.prompt_on_screen is not None:
        return Verdict("waiting", f"its screen shows: {ev.prompt_on_screen.strip()}")
    active = ev.active_at is not None and (hint is None or ev.active_at > hint.at + SETTLE)
    if hint is not None and hint.state == "waiting" and not active:
        return Verdict("waiting", f"{hint.source} says it waits for a person")
    # Once its hooks or its terminal status say a turn ended, its screen's redraws are no work.
    quiet_screen = hint is not None and hint.both_sides and hint.state == "idle"
    moments = [ev.started_at, ev.busy_since, hint.at if hint else None]
    if not quiet_screen:
        moments.append(ev.active_at)
    last = max((m for m in moments if m is not None), default=now)
    if ev.busy_since is not None and now - last > stall_after:
        return Verdict("stalled", f"an item is in process and nothing moved for {now - last:.0f} s")
    return _working_or_idle(ev, hint, now, active)


def said(ev: Evidence) -> Hint | None:
    """What the agent said of itself last in this run: its hooks, else its terminal's
    status report, else its notify program (which also fires for codex's side threads)."""
    since = ev.started_at or 0.0
    hint = ev.hint if ev.hint is not None and ev.hint.at >= since else None
    report = ev.report if ev.report is not None and ev.report.at >= since else None
    if hint is not None and hint.both_sides:
        return hint  # a hook
    return report or hint


def _working_or_idle(ev: Evidence, hint: Hint | None, now: float, active: bool) -> Verdict:
    claimed_after = ev.busy_since is not None and (hint is None or ev.busy_since > hint.at)
    if hint is not None and hint.state == "working":
        return Verdict("working", f"{hint.source} says it works")
    if hint is not None and hint.both_sides:
        return (
            Verdict("working", "it claimed an item after its turn ended")
            if claimed_after
            else Verdict("idle", f"{hint.source} says its turn ended")
        )
    recent = active and ev.active_at is not None and now - ev.active_at < RECENT
    if recent and ev.working_on_screen is None:
        return Verdict("working", "its processes or its screen are active")
    if recent and ev.working_on_screen:
        return Verdict("working", "its screen shows it works and its processes or log are active")
    if claimed_after:
        return Verdict("working", "it has an item in process")
    if hint is not None:
        return Verdict("idle", f"{hint.source} says its turn ended")
    if recent:  # activity, but a screen that would show a turn shows none
        return Verdict("idle", "its screen shows no turn in progress")
    return Verdict("idle", "nothing is active")
