"""What `swarmforge watch` shows, gathered as plain data: rows, events, output, diffs, handoffs.

Everything here only reads the project: the view (watch.py) never writes to it.
With `[transport]`, the roles of the swarm's other hosts come from their heartbeats
(hoststatus.py), asked of the NATS server less often than the swarm is read.
"""

from __future__ import annotations

import calendar
import os
import time
from dataclasses import dataclass, replace

from swarmforge import events
from swarmforge.errors import SwarmforgeError
from swarmforge.git import command
from swarmforge.handoff.mailbox import Box, Mailbox, items_in
from swarmforge.layout import LOGS_DIR
from swarmforge.swarm import placement
from swarmforge.swarm.hoststatus import CrossHost
from swarmforge.swarm.status import RoleStatus, SwarmStatus, status

OUTPUT_BYTES = 64 * 1024  # of a role's log read for its last lines
DIFF_BYTES = 2 * 1024 * 1024  # of a diff shown: a view, not a patch to apply
EVENTS_KEPT = 200
# Seconds between two questions to the NATS server about the other hosts: hosts beat
# every 5 s, and a server that is away costs a connect timeout (~1.5 s) per question.
HOSTS_EVERY = 5.0


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


def _seconds_since(stamp: str, now: float) -> int | None:
    try:
        return int(now - calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")))
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


class Feed:
    """What a live view shows, read again when it may have changed.

    Everything that happens in a swarm appends to its event log, so a view looks at the
    log's size and time often (a stat: microseconds) and reads the swarm's status, which
    costs git calls per role, when the log has moved, or every `every` seconds for what
    no event announces (a commit, an edited file, tokens spent).
    """

    def __init__(self, root: str, every: float = 2.0, hosts_every: float = HOSTS_EVERY) -> None:
        self.root = root
        self.every = every
        self.hosts_every = hosts_every
        self.events = EventTail(root)
        self._stamp: tuple[int, int] | None = None
        self._read_at = float("-inf")
        self._cross: CrossHost | None = None  # the other hosts, as last asked
        self._asked_at = float("-inf")

    def due(self) -> bool:
        """True when the view should read again: the log moved, or `every` has passed."""
        try:
            st = os.stat(self.events.path)
            stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        return stamp != self._stamp or time.monotonic() - self._read_at >= self.every

    def read(self) -> tuple[Snapshot | str, list[dict[str, object]]]:
        """The swarm now (or why it cannot be read) and the events since the last read."""
        self._read_at = time.monotonic()
        try:
            st = os.stat(self.events.path)
            self._stamp = (st.st_size, st.st_mtime_ns)
        except OSError:
            self._stamp = None
        found = self.events.more()
        try:
            return self._snapshot(), found
        except SwarmforgeError as exc:  # a damaged session record: say so, keep watching
            return " ".join(exc.lines()), found
        except OSError as exc:  # a file it cannot read: the same
            return f"Cannot read the swarm: {exc}", found

    def _snapshot(self) -> Snapshot:
        """The swarm now; the other hosts asked again only every `hosts_every` seconds,
        in between shown as last asked, their beats aged by the time since."""
        now = time.monotonic()
        ask = now - self._asked_at >= self.hosts_every
        snap = snapshot(self.root, hosts=ask)
        if ask:
            self._cross, self._asked_at = snap.cross, now
            return snap
        if self._cross is None:
            return snap
        return replace(snap, cross=aged(self._cross, int(now - self._asked_at)))


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
