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
from swarmforge.swarm import launcher, procs, runrecord
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


def _alive(root: str, record: RunRecord, role: RoleRecord) -> bool:
    if record.backend == "headless":
        return procs.is_alive(role.pid)
    from swarmforge.swarm.tmux import Tmux

    tmux = Tmux(project_socket(root))
    return procs.is_alive(tmux.pane_pid(role.session))


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
    return {
        "role": role.name,
        "agent": role.agent,
        "worktree": role.worktree,
        "path": role.path,
        "branch": role.branch,
        "port": role.port,
        "mode": role.mode,
        "alive": record.state == "running" and _alive(root, record, role),
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
