"""What a live view shows, read again only when something says it may have changed.

Reading the swarm costs git calls and a look at the processes of every role: a view
that read it on a timer cost a few percent of a core while nothing happened. Once
`start`ed, a feed watches the project (changes.py) and a read is due:

- at once when the swarm's own state changed (a handoff, an agent's state, a start or
  exit: everything that writes an event or moves a mailbox file);
- at most every `every` seconds while the roles' work changes (edits, commits);
- every `safety` seconds whatever happens, for what no file tells: an agent process
  that died with nobody to record it, the tokens an agent spends;
- with `[transport]`, every `hosts_every` seconds for the other hosts (asked alone,
  without reading this host's roles again).

The views age what they show between reads (`aged_snapshot`): the ages of states and
queues keep counting without a read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from swarmforge.config import sessionrecord
from swarmforge.errors import SwarmforgeError
from swarmforge.swarm.status.crosshost import CrossHost
from swarmforge.swarm.status.heartbeats import cross_host
from swarmforge.views.aging import aged, aged_snapshot
from swarmforge.views.changes import Changes
from swarmforge.views.eventtail import EventTail
from swarmforge.views.snapshot import Snapshot, snapshot

EVERY = 2.0  # seconds: the least time between two reads that edits and commits call for
SAFETY = 60.0  # seconds: the most time between two reads, whatever happens
# Seconds between two questions to the NATS server about the other hosts: hosts beat
# every 5 s, and a server that is away costs a connect timeout (~1.5 s) per question.
HOSTS_EVERY = 5.0


class Feed:
    """The swarm of the project at `root` and its events, for a live view."""

    def __init__(
        self,
        root: str,
        every: float = EVERY,
        hosts_every: float = HOSTS_EVERY,
        safety: float = SAFETY,
    ) -> None:
        self.root = root
        self.every = every
        self.hosts_every = hosts_every
        self.safety = safety
        self.events = EventTail(root)
        self.changes: Changes | None = None
        self._asked = False  # a read was asked for (`touch`)
        self._read_at = float("-inf")  # when this host's roles were last read
        self._local: Snapshot | None = None  # as last read, without the other hosts
        self._cross: CrossHost | None = None  # the other hosts, as last asked
        self._asked_at = float("-inf")

    def start(self, poke: Callable[[], None]) -> None:
        """Watch the project from now on; `poke` is called (from another thread) when a
        read may have become due: then ask `due_in` again."""
        if self.changes is not None:
            return
        try:
            record = sessionrecord.load(self.root)
        except SwarmforgeError:
            record = None  # the read says what is wrong with it
        try:
            changes = Changes(self.root, poke)
        except OSError:
            return  # no inotify instance to be had (the system's limit): read on a timer
        changes.start([r.path for r in record.roles] if record else [])
        self.changes = changes

    def stop(self) -> None:
        """Stop watching: from then on a read is due every `every` seconds."""
        if self.changes is not None:
            self.changes.stop()
            self.changes = None

    def touch(self) -> None:
        """Make a read due now (a person asked for one)."""
        self._asked = True

    def due_in(self) -> float:
        """Seconds until the next read is due; 0 when it is due now."""
        now = time.monotonic()
        return max(0.0, min(self._local_due(now), self._hosts_due(now)))

    def due(self) -> bool:
        """True when the view should read now."""
        return self.due_in() <= 0

    def _local_due(self, now: float) -> float:
        """Seconds until this host's roles are due (below 0 when overdue)."""
        since = now - self._read_at
        if self._asked or self._read_at == float("-inf"):
            return 0.0
        if self.changes is None or self._local is None:  # not watching, or the read failed
            return self.every - since
        state, work = self.changes.pending()
        if state:
            return 0.0
        if work or not self.changes.complete:
            return self.every - since
        return self.safety - since

    def _hosts_due(self, now: float) -> float:
        """Seconds until the other hosts are due; never without `[transport]`."""
        return float("inf") if self._cross is None else self.hosts_every - (now - self._asked_at)

    def read(self) -> tuple[Snapshot | str, list[dict[str, object]]]:
        """The swarm now (or why it cannot be read) and the events since the last read.

        Once started, what is not due is not read again but aged: call it when `due`.
        """
        found = self.events.more()
        try:
            return self._snapshot(), found
        except SwarmforgeError as exc:  # a damaged session record: say so, keep watching
            return " ".join(exc.lines()), found
        except OSError as exc:  # a file it cannot read: the same
            return f"Cannot read the swarm: {exc}", found

    def _snapshot(self) -> Snapshot:
        """The swarm now: this host's roles read again unless only the other hosts are
        due; the other hosts asked again at most every `hosts_every` seconds."""
        now = time.monotonic()
        ask = now - self._asked_at >= self.hosts_every
        if self.changes is None or self._local is None or self._local_due(now) <= 0:
            self._read_local(now, ask)
        elif ask:
            self._cross = cross_host(self.root, sessionrecord.load(self.root))
            self._asked_at = now
        assert self._local is not None
        local = aged_snapshot(self._local, int(now - self._read_at))
        if self._cross is None:
            return local
        return replace(local, cross=aged(self._cross, int(now - self._asked_at)))

    def _read_local(self, now: float, ask: bool) -> None:
        self._asked, self._read_at, self._local = False, now, None
        if self.changes is not None:
            self.changes.take()  # taken before the read: a change during it is due next
        snap = snapshot(self.root, hosts=ask)
        self._local = replace(snap, cross=None)
        if ask:
            self._cross, self._asked_at = snap.cross, now
        if self.changes is not None and self.changes.aim(snap.worktrees):
            self.touch()  # other roles: read once more, through the new watches
