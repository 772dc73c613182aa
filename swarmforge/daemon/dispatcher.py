"""What handoffd does on each pass: deliver every outbox, wake the recipients, sweep.

handoffd (handoffd.py) calls `Dispatcher.run_once()` in a loop that sleeps on an
event set by the arrivals (arrivals.py) whenever a file arrives in an outbox, the role
table's directory or the daemon's, with a slow rescan as a safety net; signal handlers
only set flags. `--once` runs a single pass. The daemon's files are `Paths` (paths.py),
what it tells of each pass is its `Report` (report.py).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from swarmforge import fsutil, locks, roletable
from swarmforge.daemon import keeping
from swarmforge.daemon.doorbell import Doorbell
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.report import Report
from swarmforge.daemon.stranded import Stranded
from swarmforge.daemon.sweep import sweep
from swarmforge.daemon.wake import Waker
from swarmforge.daemon.wakeups import Wakeups
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import delivery, waiting
from swarmforge.handoff.mailbox import Box, Mailbox, UnsafeMailbox
from swarmforge.handoff.outcome import HELD, Outcome
from swarmforge.layout import STATE_DIR

if TYPE_CHECKING:
    from swarmforge.daemon.crossing import Crossing

RESCAN_SECONDS = 5.0
SWEEP_SECONDS = 300.0
# A sender's boxes: if one is not a real directory, its outbox is left alone.
SENDING = (Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED)


def _stamp(path: str) -> tuple[int, int, int] | None:
    """What tells that the file at `path` changed: inode, size and time; None if absent."""
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Dispatcher:
    """One pass of delivery over every outbox of the project at `root` (`run_once`).

    `roles` are the roles this host runs; `remote` those that other hosts run (from
    remote.tsv), reached through `crossing` when the project has a transport.
    """

    def __init__(self, root: str, waker: Waker, log: logging.Logger) -> None:
        self.paths = Paths(root)
        self.log = log
        self.wakeups = Wakeups(waker, log)
        self.roles: dict[str, roletable.RoleEntry] = {}
        self.remote: dict[str, str] = {}
        self.crossing: Crossing | None = None
        self.no_crossing = "no [transport] is set in swarmforge/swarmforge.toml"
        self._roles_stamp: tuple[object, ...] | None = None
        self.stopping = False
        self.changed = Doorbell()
        self.unsafe: dict[str, str] = {}  # mailbox root -> why its outbox is left alone
        self.report = Report(root, log)

    def load_roles(self) -> bool:
        """Re-read roles.tsv (and remote.tsv) if it changed; True if the role table is new."""
        stamp = (_stamp(self.paths.roles), _stamp(self.paths.remote))
        if stamp == self._roles_stamp:
            return False
        if stamp[0] is None:
            changed = self._roles_stamp is not None
            self.roles, self.remote, self._roles_stamp = {}, {}, None
            self._link()
            return changed
        try:
            table = roletable.read_roles(self.paths.root)
            remote = roletable.read_remote(self.paths.root)
        except SwarmforgeError as exc:
            self.log.error("keeping the previous role table: %s", exc)
            return False
        self._roles_stamp = stamp
        self.roles = {name: entry for name, entry in table.items() if name not in remote}
        self.remote = {name: host for name, host in remote.items() if name in table}
        self.log.info("role table: %s", ", ".join(self.roles) or "(empty)")
        if self.remote:
            shown = ", ".join(
                f"{name} on {host or 'the first host'}" for name, host in remote.items()
            )
            self.log.info("roles of other hosts: %s", shown)
        self._link()
        return True

    def _link(self) -> None:
        if self.crossing is not None:
            self.crossing.set_remote(self.remote)
            self.crossing.serve(self.roles)

    def remote_way(self) -> delivery.Remote | None:
        """How mail reaches the roles of other hosts, if any are named."""
        if self.crossing is not None:
            return self.crossing
        return Stranded(self.remote, self.no_crossing) if self.remote else None

    def sweep(self) -> int:
        """Remove temporary files that killed writers left in mailboxes (see sweep); how many."""
        removed = sweep(self.paths.root, self.roles)
        if removed:
            self.log.info("removed %d temporary file(s) left by killed processes", removed)
        return removed

    def mailboxes(self) -> list[Mailbox]:
        """Every role's mailbox and the main checkout's, once each, in path order.

        The main checkout's is included even when no role works there: `swarmforge
        send` queues the user's handoffs in its outbox. Roots are compared resolved so
        that one directory spelled two ways is still taken once.
        """
        found: dict[str, Mailbox] = {}
        for worktree in [self.paths.root, *(e.path for e in self.roles.values())]:
            box = Mailbox(worktree)
            found.setdefault(os.path.realpath(box.root), box)
        return [found[root] for root in sorted(found)]

    def outboxes(self) -> list[str]:
        """The resolved outbox directory of every mailbox whose sending boxes are safe."""
        return [
            os.path.realpath(box.path(Box.OUTBOX))
            for box in self.mailboxes()
            if box.problem(*SENDING) is None
        ]

    def _pending(self) -> list[tuple[str, bool]]:
        """(path, tracked by git) of every finished outbox file of a safe mailbox, by name."""
        files: list[tuple[str, bool]] = []
        unsafe: dict[str, str] = {}
        for box in self.mailboxes():
            problem = box.problem(*SENDING)
            if problem is not None:
                unsafe[box.root] = problem.message
                if self.unsafe.get(box.root) != problem.message:
                    self.log.error("leaving the outbox of %s alone: %s", box.worktree, problem)
                continue
            found = waiting.pending(os.path.realpath(box.path(Box.OUTBOX)))
            # Only a mailbox in its checkout (statedir.py) lies where git could track files.
            inside = box.state == str(Path(box.worktree, STATE_DIR))
            tracked = waiting.tracked(box.worktree) if found and inside else set()
            files += [(path, Path(path).name in tracked) for path in found]
        self.unsafe = unsafe
        return sorted(files, key=lambda item: Path(item[0]).name)

    def run_once(self) -> list[Outcome]:
        """One pass: take in mail from other hosts, deliver every finished outbox file in
        name order, then wake recipients."""
        self.load_roles()
        self._take_in()
        files = self._pending()
        outcomes = []
        remote = self.remote_way()
        for path, tracked in files:
            if self.stopping:
                break  # a stop request waits only for the delivery in progress
            try:
                outcome = delivery.deliver(path, self.roles, is_tracked=tracked, remote=remote)
            except (OSError, UnsafeMailbox) as exc:
                self.report.stuck_at(path, str(exc))
                continue
            self.report.outcome(outcome, self.remote)
            for role in outcome.copied:
                self._keep(role, outcome.name)
                self.wakeups.add(role)
            if outcome.status == HELD:
                self.report.stuck_at(path, outcome.reason)
            else:
                self.report.unstuck(path)
            outcomes.append(outcome)
        self.report.still_waiting({path for path, _ in files})
        self.wakeups.send(self.roles, self.paths.root, time.monotonic())
        return outcomes

    def _keep(self, role: str, name: str) -> None:
        """Keep a copy of what was just delivered to `role` until it is done (keeping.py)."""
        found = Mailbox(self.roles[role].path).locate(name)
        if found is None:
            return
        try:
            keeping.keep(self.paths.root, role, name, fsutil.read_regular(found[1]))
        except OSError as exc:
            self.log.error("cannot keep a copy of %s for %s: %s", name, role, exc)

    def _take_in(self) -> None:
        """Write the mail that came from other hosts into its roles' inboxes."""
        if self.crossing is None:
            return
        for role, got in self.crossing.take():
            if self.report.arrival(role, got):
                self.wakeups.add(role)

    def stop_requested(self) -> bool:
        """True if a stop was asked for by signal or by the stop file.

        A stop file made by hand is consumed; the one a running `stop` holds stays
        until that `stop` has seen every daemon go (stopping.stop removes it).
        """
        if os.path.lexists(self.paths.stop):
            self.stopping = True
            locks.remove_unless_held(self.paths.stop)
        return self.stopping

    def wait(self, also_due: float | None = None) -> bool:
        """Sleep until something changes, a wake-up or `also_due` (time.monotonic()) falls
        due, or the safety rescan; True if something changed."""
        timeout = RESCAN_SECONDS
        for due in (self.wakeups.next_due(), also_due):
            if due is not None:
                timeout = max(0.0, min(timeout, due - time.monotonic()))
        return self.changed.wait(timeout)

    def pass_due(self, last: float) -> bool:
        """Whether a pass is due with nothing changed since the one at `last`: the safety
        rescan, or a wake-up to retry."""
        now = time.monotonic()
        wakeup = self.wakeups.next_due()
        return now - last >= RESCAN_SECONDS or (wakeup is not None and wakeup <= now)
