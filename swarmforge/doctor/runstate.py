"""What a run left on this host: the delivery daemon, the recorded run and its worktrees,
and the ports of its roles."""

from __future__ import annotations

import os
from pathlib import Path

from swarmforge.config import sessionrecord
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import read_pid, running_pid
from swarmforge.doctor.check import Check
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.layout import SESSION_RECORD
from swarmforge.text import shown


def check_daemon(root: str) -> Check:
    """The delivery daemon runs, or at least left no stale pid file behind."""
    paths = Paths(root)
    pid = running_pid(paths)
    if pid is not None:
        return Check("daemon", "ok", f"running (pid {pid})" if pid else "starting")
    if os.path.lexists(paths.pid):
        gone = f"process {read_pid(paths) or '?'} is gone"
        fix = "`swarmforge gc` cleans it"
        return Check("daemon", "warn", f"not running, but {paths.pid} remains ({gone})", fix)
    return Check("daemon", "ok", "not running")


def check_held(root: str) -> Check:
    """No mail waits for a mailbox the daemon cannot deliver to."""
    from swarmforge.daemon import held

    found = held.read(root)
    if not found:
        return Check("mail", "ok", "nothing held")
    said = "; ".join(f"{shown(h.name)}: {shown(h.reason)}" for h in found[:5])
    more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
    fix = "`swarmforge up` makes a missing worktree again; an unsafe mailbox must be removed"
    return Check("mail", "warn", f"{len(found)} handoff(s) held: {said}{more}", fix)


def _live(root: str, record: sessionrecord.SessionRecord) -> bool:
    from swarmforge.swarm.teardown import is_running

    try:
        return is_running(root, record)
    except SwarmforgeError:
        return False  # no tmux to ask: none of the run's sessions can be alive


def check_run(root: str) -> list[Check]:
    """The session record: its state, and whether its roles' worktrees exist."""
    try:
        record = sessionrecord.load(root)
    except CorruptFile as exc:
        return [Check("run", "FAIL", exc.message, f"repair or remove {SESSION_RECORD}")]
    if record is None:
        return [Check("run", "ok", "no swarm run recorded yet")]
    detail = f"run {record.run_id}: {record.state} ({record.backend})"
    run = Check("run", "ok", detail)
    if record.state == "running" and not _live(root, record):
        fix = "`swarmforge gc` cleans up; `swarmforge up` resumes the run"
        run = Check("run", "warn", detail + ", but its processes are gone", fix)
    missing = [r.name for r in record.roles if not Path(r.path).is_dir()]
    trees = Check("worktrees", "ok", f"all {len(record.roles)} present")
    if missing:
        fix = "`swarmforge gc` prunes them; the next `swarmforge up` checks them out again"
        trees = Check("worktrees", "warn", f"missing for role(s) {', '.join(missing)}", fix)
    return [run, trees]


def check_ports(root: str) -> Check:
    """No process other than a role's own listens on a port the run gave that role."""
    try:
        record = sessionrecord.load(root)
    except CorruptFile:
        return Check("ports", "ok", "no session record to read (see the run check)")
    if record is None:
        return Check("ports", "ok", "no swarm run recorded yet")
    from swarmforge.swarm.portholders import port_holders

    held = port_holders(root, record)
    if not held:
        count = len(record.roles)
        return Check("ports", "ok", f"none of the {count} role port(s) is held by another process")
    ports = {r.name: r.port for r in record.roles}
    found = [f"role {n}: port {ports[n]} held by {_holder(h.pid, h.name)}" for n, h in held.items()]
    fix = "stop that process, or `swarmforge down` then `up`: the role then gets the next free port"
    return Check("ports", "warn", "; ".join(found), fix)


def _holder(pid: int | None, name: str | None) -> str:
    who = f"pid {pid}" if pid is not None else "a process of another user"
    return f"{who} ({name})" if name else who
