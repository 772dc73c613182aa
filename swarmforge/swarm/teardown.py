"""Ending what a run started, for `down` and `gc` alike: whether it runs, its processes, its record.

Both `up` (which cleans up after a killed runner) and `gc` use it, so neither needs the
other.
"""

from __future__ import annotations

from pathlib import Path

from swarmforge import statedir, tagging
from swarmforge.config import sessionrecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.layout import RUNNER_LOCK, RUNNER_PID
from swarmforge.locks import is_held


def is_running(root: str, record: SessionRecord) -> bool:
    """True if the run's backend still runs (the runner, or the tmux server with a session)."""
    if record.backend == "headless":
        return is_held(statedir.path(root, RUNNER_LOCK))
    from swarmforge.tmux.server import Tmux, project_socket

    tmux = Tmux(project_socket(root))
    return any(tmux.has_session(role.session_name) for role in record.roles)


def stop_processes(root: str, record: SessionRecord | None) -> list[int]:
    """End the runner, the tmux sessions and every process tagged with the run; the pids."""
    ended: list[int] = []
    if record is not None:
        pid_file = Path(statedir.path(root, RUNNER_PID))
        lock = statedir.path(root, RUNNER_LOCK)
        if record.runner_pid and is_held(lock):
            ended += tagging.terminate_tree(record.runner_pid)
        from swarmforge.tmux.server import Tmux, project_socket

        if record.backend == "tmux" or Tmux(project_socket(root)).server_running():
            Tmux(project_socket(root)).kill_server()
        ended += tagging.terminate(tagging.tagged(root, record.run_id))
        if pid_file.exists() and not is_held(lock):
            pid_file.unlink()
    ended += tagging.terminate(tagging.tagged(root))
    return ended


def record_stopped(root: str) -> None:
    """Record the session as stopped, with no process of it left to name."""
    sessionrecord.update(root, _stopped)


def _stopped(record: SessionRecord) -> None:
    record.state = "stopped"
    record.runner_pid = record.inhibitor_pid = None
    for role in record.roles:
        role.pid = None
