"""`down`: stop everything a session started; with `--purge`, remove its worktrees too."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from swarmforge import events, statedir
from swarmforge.agents import conversation
from swarmforge.agents.environment import remove_temp_dirs
from swarmforge.config import sessionlock, sessionrecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.daemon import keeping, stopping
from swarmforge.git import names, removing
from swarmforge.layout import REMOTE_TSV, ROLES_TSV
from swarmforge.swarm.capturing import capture_roles
from swarmforge.swarm.session.progress import Progress, quiet
from swarmforge.swarm.teardown import record_stopped, stop_processes


def _purge(
    root: str, record: SessionRecord, progress: Progress
) -> tuple[list[str], dict[str, str | None]]:
    """Remove the run's worktrees and forget the run; the worktrees removed, and per role
    the commit that saved its uncommitted work."""
    removed, rescued = [], {}
    for role in record.roles:
        if role.worktree in ("master", "none"):
            continue
        removal = removing.remove(
            root, role.worktree, rescue_ref=names.rescue_ref(record.run_id, role.worktree)
        )
        rescued[role.name] = removal.rescued
        if removal.removed:
            removed.append(role.worktree)
            saved = (
                f" (uncommitted work saved as {removal.rescued[:10]})" if removal.rescued else ""
            )
            progress(f"removed worktree {role.worktree}{saved}")
        for rel, target in removal.kept:
            progress(f"kept the repository {rel} of worktree {role.worktree} at {target}")
    sessionrecord.remove(root)
    for table in (REMOTE_TSV, ROLES_TSV):
        Path(statedir.path(root, table)).unlink(missing_ok=True)
    keeping.forget(root)  # the run's mail is done with: what was pending was kept above
    conversation.forget(root)  # and its agents' conversations: a new run starts anew
    return removed, rescued


@dataclass(frozen=True)
class Stopped:
    """What `down` did."""

    run_id: str | None  # None: no swarm was ever started here
    stopped: list[int]  # the processes ended
    daemon: int | None
    purged: bool
    removed: list[str]  # the worktrees removed (with purge)
    rescued: dict[str, str | None]  # per role, the commit saving its uncommitted work

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def down(root: str, *, purge: bool = False, progress: Progress = quiet) -> Stopped:
    """Stop everything the run started; with `purge`, remove its worktrees (work rescued)."""
    root = os.path.realpath(root)
    with sessionlock.starting_or_stopping(root):
        return down_held(root, purge, progress)


def down_held(root: str, purge: bool, progress: Progress) -> Stopped:
    """`down`, by a caller that holds the session lock."""
    record = sessionrecord.load(root)
    ended = stop_processes(root, record)
    remove_temp_dirs(root)  # the agents' temporary files: nothing runs that could use them
    daemon = stopping.stop(root)
    progress(f"stopped {len(ended)} process(es)" + (f", daemon {daemon}" if daemon else ""))
    # Nothing runs now that could change a worktree: each role's work as it was left.
    for problem in capture_roles(root, "down --purge" if purge else "down"):
        progress(problem)
    rescued: dict[str, str | None] = {}
    removed: list[str] = []
    if record is not None:
        # Before the record says stopped: `events --follow` ends on that, after this event.
        fields = {"run_id": record.run_id, "stopped": len(ended), "purge": purge}
        events.emit(root, "swarm-down", fields)
    if purge and record is not None:
        removed, rescued = _purge(root, record, progress)
    elif record is not None:
        record_stopped(root)
    return Stopped(record.run_id if record else None, ended, daemon, purge, removed, rescued)
