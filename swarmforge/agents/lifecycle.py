"""An agent's life as `status` shows it: started, exited (code, when, last lines), restarted.

Whatever supervises a role's process (the tmux pane's supervisor, or the headless
runner) records each start and exit in `.swarmforge/agents/<role>.json`, and asks
`restart_pause` whether, and after how long, to start it again. Each start, exit and
planned restart is also an event in the project's log (events.py).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from swarmforge import events, filewrite, statedir
from swarmforge.config.settings import Restart
from swarmforge.errors import CorruptFile
from swarmforge.layout import AGENTS_DIR
from swarmforge.records import read_json_model
from swarmforge.times import parse, stamp

MAX_BACKOFF = 30.0
TAIL_LINES = 20
# An exit this soon after its start is a quick one: the agent could not start (no login,
# no network, a bad flag). `give_up_after` quick exits in a row leave it down.
QUICK_EXIT = 10.0


class AgentLife(BaseModel):
    """The last known life of one role's process."""

    model_config = ConfigDict(extra="forbid")

    role: str
    run_id: str
    state: Literal["running", "exited"]
    pid: int | None = None
    started_at: str
    restarts: int = 0
    exit_code: int | None = None  # of the last exit (kept while a restarted process runs)
    exited_at: str | None = None
    restart_at: str | None = None  # when an exited agent starts again; None: it will not
    tail: list[str] = []
    quick_exits: int = 0  # exits in a row, each within QUICK_EXIT seconds of its start
    gave_up: str | None = None  # why it is left down after as many quick exits


def life_path(root: str, role: str) -> Path:
    """Where the life of `role` is recorded."""
    return Path(statedir.path(root, AGENTS_DIR), f"{role}.json")


def load(root: str, role: str, run_id: str) -> AgentLife | None:
    """The recorded life of `role` in run `run_id`, or None (none yet, another run, damaged)."""
    try:
        life = read_json_model(str(life_path(root, role)), AgentLife)
    except CorruptFile:
        return None  # a status view never fails on it; the next start rewrites it
    return life if life is not None and life.run_id == run_id else None


def _save(root: str, life: AgentLife) -> None:
    path = life_path(root, life.role)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (life.model_dump_json(indent=2) + "\n").encode()
    filewrite.atomic_write(str(path), data, durable=False)


def started(root: str, role: str, run_id: str, pid: int, restarts: int) -> None:
    """Record that `role`'s process `pid` started; a restart keeps how the last life ended."""
    before = load(root, role, run_id) if restarts else None
    _save(
        root,
        AgentLife(
            role=role,
            run_id=run_id,
            state="running",
            pid=pid,
            started_at=stamp(),
            restarts=restarts,
            exit_code=before.exit_code if before else None,
            exited_at=before.exited_at if before else None,
            tail=before.tail if before else [],
            quick_exits=before.quick_exits if before else 0,
        ),
    )
    fields = {"role": role, "run_id": run_id, "pid": pid, "restarts": restarts}
    events.emit(root, "agent-started", fields)


def exited(
    root: str,
    role: str,
    run_id: str,
    code: int,
    tail: list[str],
    policy: Restart,
    give_up_after: int,
) -> float | None:
    """Record that `role`'s process exited with `code`, and decide its restart: seconds to
    wait before it, or None to leave it down (its policy, or `give_up_after` quick exits
    in a row, each within QUICK_EXIT seconds of its start)."""
    before = load(root, role, run_id)
    now = time.time()
    started_at = before.started_at if before else stamp()
    restarts = before.restarts if before else 0
    quick = before is not None and now - parse(started_at) < QUICK_EXIT
    quick_exits = (before.quick_exits if before else 0) + 1 if quick else 0
    pause = restart_pause(policy, code, restarts)
    gave_up = None
    if pause is not None and quick_exits >= give_up_after:
        pause = None
        gave_up = (
            f"it exited {quick_exits} times in a row within {QUICK_EXIT:.0f} s of starting; "
            "not restarted until `swarmforge up`"
        )
    kept = [line.rstrip() for line in tail if line.strip()][-TAIL_LINES:]
    _save(
        root,
        AgentLife(
            role=role,
            run_id=run_id,
            state="exited",
            pid=before.pid if before else None,
            started_at=started_at,
            restarts=restarts,
            exit_code=code,
            exited_at=stamp(),
            restart_at=None if pause is None else stamp(now + pause),
            tail=kept,
            quick_exits=quick_exits,
            gave_up=gave_up,
        ),
    )
    ended: list[tuple[str, dict[str, object]]] = [
        ("agent-exited", {"role": role, "run_id": run_id, "exit_code": code})
    ]
    if pause is not None:
        ended.append(("agent-restarting", {"role": role, "run_id": run_id, "after": pause}))
    events.EventLog(root).emit_many(ended)
    _capture(root, role)
    return pause


def _capture(root: str, role: str) -> None:
    """Capture the role's work as its exited agent left it, before anything starts it again
    (git/captures.py). A capture that cannot be made never keeps the role down."""
    # Imported here: `status` reads this module and never captures.
    from swarmforge import roletable
    from swarmforge.errors import SwarmforgeError
    from swarmforge.git import captures

    try:
        entry = roletable.read_roles(root).get(role)
        if entry is not None and Path(entry.path).is_dir():
            captures.take_logged(root, role, entry.path, "agent exited")
    except (SwarmforgeError, OSError):
        return


def restart_pause(policy: Restart, code: int, restarts: int) -> float | None:
    """Seconds to wait before restarting a process that exited with `code`; None: don't.

    `on-failure` restarts after a non-zero exit, waiting 1, 2, 4, ... seconds (at
    most MAX_BACKOFF) as the restarts add up; an agent that was ended by a signal
    counts as failed. A clean exit (0) is the agent's own decision and is kept.
    """
    if policy == "never" or code == 0:
        return None
    return min(MAX_BACKOFF, 2.0**restarts)
