"""A role's process as `status` shows it: running, exited (with how it ended), or gone."""

from __future__ import annotations

from dataclasses import dataclass

from swarmforge.agents.lifecycle import AgentLife
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.proc import liveness
from swarmforge.tmux.server import project_socket


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


def role_alive(root: str, record: SessionRecord, role: RoleRecord, life: AgentLife | None) -> bool:
    if life is not None and life.state == "exited":
        return False
    if life is not None and record.backend == "tmux":
        return liveness.is_alive(life.pid)
    if record.backend == "headless":
        return liveness.is_alive(role.pid)
    from swarmforge.tmux.server import Tmux

    tmux = Tmux(project_socket(root))
    return liveness.is_alive(tmux.pane_pid(role.session_name))


def shown_process(life: AgentLife | None, alive: bool) -> Process:
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
