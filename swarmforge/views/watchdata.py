"""What `swarmforge watch` shows, gathered as plain data: rows, events, output, diffs, handoffs.

Everything here only reads the project: the views (watch.py, cockpit.py) never write
to it. With `[transport]`, the roles of the swarm's other hosts come from their
heartbeats (hoststatus.py). When each is read again is feed.py's business.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace

from swarmforge import events, times
from swarmforge.git import command
from swarmforge.handoff.mailbox import Box, Mailbox, items_in
from swarmforge.layout import LOGS_DIR
from swarmforge.swarm import placement
from swarmforge.swarm.hoststatus import CrossHost
from swarmforge.swarm.status import RoleStatus, SwarmStatus, status

OUTPUT_BYTES = 64 * 1024  # of a role's log read for its last lines
DIFF_BYTES = 2 * 1024 * 1024  # of a diff shown: a view, not a patch to apply
EVENTS_KEPT = 200


@dataclass(frozen=True)
class Row:
    """One role as the view's table shows it."""

    role: str
    state: str  # the agent's state, else `up`, `down` or `stopped`
    state_age: int | None  # seconds in that state
    queued: int
    oldest_age: int | None  # seconds since the oldest queued item arrived
    current: str  # the item in hand's file name, or ""
    current_path: str | None
    port: int
    branch: str
    ahead: int | None  # commits on the branch and not on the base branch
    dirty: int | None
    tokens: int | None
    budget: int | None  # the role's token budget for the run, if it has one


@dataclass(frozen=True)
class Snapshot:
    """The run as the view shows it at one moment."""

    project: str
    state: str  # none, running or stopped (SwarmStatus.state)
    run_id: str | None
    backend: str | None
    base: str
    rows: list[Row]
    cross: CrossHost | None = None  # with [transport]: the other hosts and their roles
    worktrees: tuple[str, ...] = ()  # of this host's roles: where their work changes


def _seconds_since(stamp: str, now: float) -> int | None:
    try:
        return int(now - times.parse(stamp[:19]))  # to the whole second, as ages are shown
    except ValueError:
        return None


def _oldest_age(path: str, now: float) -> int | None:
    # A queued item is written then renamed into new/: its mtime is when it arrived,
    # and reading it costs a stat rather than a parse of every queued file.
    ages = []
    for item in Mailbox(path).items(Box.NEW):
        try:
            ages.append(int(now - os.stat(item).st_mtime))
        except OSError:
            continue
    return max(ages) if ages else None


def ahead(root: str, base: str, branch: str) -> int | None:
    """How many commits `branch` has that `base` has not; None if git cannot tell."""
    result = command.run(root, "rev-list", "--count", f"{base}..{branch}", "--")
    return int(result.stdout) if result.ok else None


def row(root: str, base: str, role: RoleStatus, now: float) -> Row:
    """The table row of one role's status."""
    agent = role.agent_state
    if agent is not None:
        state, age = agent.state, _seconds_since(agent.since, now)
    else:
        state, age = ("up" if role.alive else role.process.state), None
    current = role.current
    return Row(
        role=role.role,
        state=state,
        state_age=age,
        queued=role.queued,
        oldest_age=_oldest_age(role.path, now),
        current=os.path.basename(current.path) if current else "",
        current_path=current.path if current else None,
        port=role.port,
        branch=role.branch,
        ahead=ahead(root, base, role.branch),
        dirty=role.dirty_files,
        tokens=role.tokens.total if role.tokens else None,
        budget=role.budget,
    )


def snapshot(root: str, now: float | None = None, hosts: bool = False) -> Snapshot:
    """Every role's row, read now (some git calls per role: call it off the UI thread);
    with `hosts` and `[transport]`, the other hosts' roles too (a NATS round trip)."""
    found: SwarmStatus = status(root, hosts=hosts)
    base = placement.main_branch(found.project)
    moment = time.time() if now is None else now
    return Snapshot(
        project=found.project,
        state=found.state,
        run_id=found.run_id,
        backend=found.backend,
        base=base,
        rows=[row(found.project, base, r, moment) for r in found.roles],
        cross=found.cross,
        worktrees=tuple(r.path for r in found.roles),
    )


def aged(cross: CrossHost, seconds: int) -> CrossHost:
    """`cross` as it stands `seconds` after it was asked: every beat that much older."""
    if seconds <= 0:
        return cross
    roles = [
        r
        if r.beat_age_seconds is None
        else replace(r, beat_age_seconds=r.beat_age_seconds + seconds)
        for r in cross.roles
    ]
    hosts = [
        h if h.age_seconds is None else replace(h, age_seconds=h.age_seconds + seconds)
        for h in cross.hosts
    ]
    return replace(cross, roles=roles, hosts=hosts)


def _older(age: int | None, seconds: int) -> int | None:
    return None if age is None else age + seconds


def aged_snapshot(snap: Snapshot, seconds: int) -> Snapshot:
    """`snap` as it stands `seconds` after it was read: every age that much older."""
    if seconds <= 0:
        return snap
    rows = [
        replace(r, state_age=_older(r.state_age, seconds), oldest_age=_older(r.oldest_age, seconds))
        for r in snap.rows
    ]
    cross = aged(snap.cross, seconds) if snap.cross is not None else None
    return replace(snap, rows=rows, cross=cross)


class EventTail:
    """The project's event log read incrementally: only lines appended since the last read.

    The first read takes only the log's last EVENTS_KEPT lines, from its end: a view
    opening on a log of a hundred thousand events reads what it shows, not the log.
    """

    def __init__(self, root: str) -> None:
        self.path = events.log_path(root)
        self.offset: int | None = None
        self.line = 0

    def more(self) -> list[dict[str, object]]:
        """The events appended since the last call (the last EVENTS_KEPT at most)."""
        if self.offset is None:
            chunk = events.tail(self.path, EVENTS_KEPT)
        else:
            chunk = events.read(self.path, self.offset, self.line)
        self.offset, self.line = chunk.end, chunk.lines
        return chunk.events[-EVENTS_KEPT:]


def output(root: str, role: str, lines: int = 200) -> str:
    """The last `lines` lines of the role's output log, or a sentence saying there is none."""
    path = os.path.join(root, LOGS_DIR, role + ".log")
    try:
        with open(path, "rb") as log:
            log.seek(max(0, os.fstat(log.fileno()).st_size - OUTPUT_BYTES))
            data = log.read(OUTPUT_BYTES)
    except OSError:
        return f"(no output yet: {path} cannot be read)"
    return "\n".join(data.decode(errors="replace").splitlines()[-lines:])


def diff(root: str, base: str, branch: str) -> str:
    """`git diff base...branch`: its --stat, then the diff itself."""
    span = f"{base}...{branch}"
    parts = []
    for extra in (["--stat"], []):
        result = command.run(root, "diff", "--no-color", *extra, span, "--")
        if not result.ok:
            return f"(git diff {span} failed: {result.stderr.decode(errors='replace').strip()})"
        parts.append(result.stdout[:DIFF_BYTES].decode(errors="replace"))
    return "\n".join(parts).strip() or f"(no difference between {base} and {branch})"


def handoff(path: str | None) -> str:
    """The text of the item in hand: a task's file, or every file of a batch."""
    if path is None:
        return "(no item in hand)"
    files = items_in(path) if os.path.isdir(path) else [path]
    parts = []
    for name in files:
        try:
            with open(name, "rb") as item:
                parts.append(
                    f"== {os.path.basename(name)}\n" + item.read().decode(errors="replace")
                )
        except OSError as exc:
            parts.append(f"== {os.path.basename(name)}: cannot be read ({exc.strerror})")
    return "\n".join(parts) or "(the batch is empty)"


def spent(row: Row) -> str:
    """The row's tokens as shown: `12,345`, `12,345/50,000` against a budget, `-` unknown."""
    if row.tokens is None:
        return "-"
    return f"{row.tokens:,}" + (f"/{row.budget:,}" if row.budget is not None else "")
