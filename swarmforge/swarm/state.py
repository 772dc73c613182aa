"""`status`: what each role of the run is doing, read from the files and processes."""

from __future__ import annotations

import calendar
import os
import time

from swarmforge import proc
from swarmforge.errors import CorruptFile
from swarmforge.handoff import handoffd, message
from swarmforge.handoff.daemon import Paths
from swarmforge.handoff.mailbox import Box, Mailbox, items_in
from swarmforge.handoff.notify import project_socket
from swarmforge.swarm import launcher, lifecycle, procs, runrecord
from swarmforge.swarm.lifecycle import AgentLife
from swarmforge.swarm.runrecord import RoleRecord, RunRecord


def _age(stamp: str | None, now: float) -> int | None:
    if not stamp:
        return None
    try:
        return int(now - calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return None


def _current(box: Mailbox, now: float) -> dict[str, object] | None:
    batches = box.batches()
    items = items_in(batches[0]) if batches else box.items(Box.IN_PROCESS)
    if not items:
        return None
    try:
        first = message.read(items[0])
    except (OSError, CorruptFile):
        return {"path": batches[0] if batches else items[0], "age_seconds": None}
    return {
        "path": batches[0] if batches else items[0],
        "count": len(items),
        "from": first.get("from"),
        "age_seconds": _age(first.get("dequeued_at"), now),
    }


def _failed_items(box: Mailbox) -> int:
    count = 0
    completed = box.path(Box.COMPLETED)
    for path in items_in(completed) + [p for b in _dirs(completed) for p in items_in(b)]:
        try:
            count += message.read(path).get("outcome") == "failed"
        except (OSError, CorruptFile):
            continue
    return count


def _dirs(directory: str) -> list[str]:
    try:
        return [e.path for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def _dirty(path: str) -> int | None:
    result = proc.run(["git", "-C", path, "status", "--porcelain"])
    return len(result.stdout.splitlines()) if result.ok else None


def _alive(root: str, record: RunRecord, role: RoleRecord, life: AgentLife | None) -> bool:
    if life is not None and life.state == "exited":
        return False
    if life is not None and record.backend == "tmux":
        return procs.is_alive(life.pid)
    if record.backend == "headless":
        return procs.is_alive(role.pid)
    from swarmforge.swarm.tmux import Tmux

    tmux = Tmux(project_socket(root))
    return procs.is_alive(tmux.pane_pid(role.session))


def _process(life: AgentLife | None, alive: bool) -> dict[str, object]:
    """The role's process as status shows it: running, exited (code, when, last lines), gone."""
    if life is None:
        return {"state": "running" if alive else "gone"}
    state = "running" if alive else "exited" if life.state == "exited" else "gone"
    shown: dict[str, object] = {"state": state, "pid": life.pid, "restarts": life.restarts}
    shown["started_at"] = life.started_at
    if life.exit_code is not None:
        shown |= {"exit_code": life.exit_code, "exited_at": life.exited_at, "last_lines": life.tail}
    if life.state == "exited":
        shown["restart_at"] = life.restart_at
    return shown


def rescues(root: str) -> list[str]:
    """Refs holding uncommitted work saved when worktrees were removed, of every run."""
    result = proc.run(
        ["git", "-C", root, "for-each-ref", "--format=%(refname)", "refs/swarmforge/rescue/"]
    )
    return result.stdout.decode().split() if result.ok else []


def role_status(root: str, record: RunRecord, role: RoleRecord, now: float) -> dict[str, object]:
    """Everything `status` shows about one role."""
    box = Mailbox(role.path)
    exists = os.path.isdir(role.path)
    life = lifecycle.load(root, role.name, record.run_id)
    alive = record.state == "running" and _alive(root, record, role, life)
    return {
        "role": role.name,
        "agent": role.agent,
        "worktree": role.worktree,
        "path": role.path,
        "branch": role.branch,
        "port": role.port,
        "mode": role.mode,
        "alive": alive,
        "process": _process(life, alive) if record.state == "running" else {"state": "stopped"},
        "queued": len(box.items(Box.NEW)),
        "current": _current(box, now),
        "dirty_files": _dirty(role.path) if exists else None,
        "failed_items": _failed_items(box),
        "undeliverable": len([n for n in _names(box.path(Box.FAILED)) if n.endswith(".error")]),
        "worktree_missing": not exists,
    }


def _names(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []


def status(root: str) -> dict[str, object]:
    """The run's state and every role's."""
    root = os.path.realpath(root)
    record = runrecord.load(root)
    daemon = handoffd.running_pid(Paths(root))
    if record is None:
        return {
            "project": root,
            "run_id": None,
            "state": "none",
            "daemon": daemon,
            "roles": [],
            "rescues": rescues(root),
        }
    now = time.time()
    return {
        "project": root,
        "run_id": record.run_id,
        "backend": record.backend,
        "state": record.state,
        "live": launcher.is_running(root, record),
        "runner_pid": record.runner_pid,
        "tmux_socket": project_socket(root) if record.backend == "tmux" else None,
        "daemon": daemon,
        "roles": [role_status(root, record, r, now) for r in record.roles],
        "rescues": rescues(root),
    }
