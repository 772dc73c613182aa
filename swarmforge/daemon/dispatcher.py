"""What handoffd does on each pass: deliver every outbox, wake the recipients, sweep.

handoffd (handoffd.py) calls `Dispatcher.run_once()` in a loop that sleeps on an
event set by the arrivals (watch.py) whenever a file arrives in an outbox, the role
table's directory or the daemon's, with a slow rescan as a safety net; signal handlers
only set flags. `--once` runs a single pass. The daemon's files are `Paths`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from swarmforge import events, filewrite, locks, roletable
from swarmforge.daemon.wake import Waker
from swarmforge.daemon.wakeups import Doorbell, Wakeups
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import delivery, message, waiting
from swarmforge.handoff.mailbox import Box, Mailbox, UnsafeMailbox
from swarmforge.handoff.outcome import DELIVERED, FAILED, HELD, Outcome
from swarmforge.layout import DAEMON_DIR, REMOTE_TSV, ROLES_TSV
from swarmforge.proc import liveness
from swarmforge.text import shown

if TYPE_CHECKING:
    from swarmforge.daemon.crossing import Crossing

RESCAN_SECONDS = 5.0
SWEEP_SECONDS = 300.0
# Where helpers and the daemon write temporary files (the handoffs root itself too).
SWEPT = (Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED, Box.NEW, Box.IN_PROCESS, Box.COMPLETED)
# A sender's boxes: if one is not a real directory, its outbox is left alone.
SENDING = (Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED)


def _stamp(path: str) -> tuple[int, int, int] | None:
    """What tells that the file at `path` changed: inode, size and time; None if absent."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _sweep_dir(directory: str) -> int:
    """Remove the temporary files of dead processes in `directory`; how many."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return 0
    removed = 0
    for name in names:
        owner = filewrite.temp_owner(name)
        if owner is None or liveness.is_alive(owner):
            continue
        path = os.path.join(directory, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                continue
            os.unlink(path)
        except FileNotFoundError:
            continue
        removed += 1
    return removed


def sweep(root: str, roles: dict[str, roletable.RoleEntry]) -> int:
    """Remove the temporary files that killed writers left in the project at `root`; how many.

    Every mailbox (each role's and the main checkout's: the mailbox root, each box and
    each batch directory) and the daemon's directory are looked in. A temporary name
    carries its writer's pid (filewrite.temp_name): only files of processes that are gone
    are removed, never one a live process may still write.
    """
    directories = {Paths(root).dir}
    for worktree in {root, *(e.path for e in roles.values())}:
        box = Mailbox(worktree)
        if box.problem() is not None:
            continue  # a mailbox root that is a link: nothing is removed through it
        directories.add(box.root)  # the sequence counter's temporary files
        safe = [b for b in SWEPT if box.problem(b) is None]
        directories.update(box.path(b) for b in safe)
        for b in (Box.IN_PROCESS, Box.COMPLETED):
            if b in safe:
                directories.update(box.batches(b))
    return sum(_sweep_dir(d) for d in sorted(directories))


class Paths:
    """The daemon's runtime files under `<root>/.swarmforge/daemon/`."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.dir = os.path.join(root, DAEMON_DIR)
        self.pid = os.path.join(self.dir, "handoffd.pid")
        self.log = os.path.join(self.dir, "handoffd.log")
        self.stop = os.path.join(self.dir, "stop")
        self.lock = os.path.join(self.dir, "handoffd.lock")
        self.roles = os.path.join(root, ROLES_TSV)
        self.remote = os.path.join(root, REMOTE_TSV)


class Stranded:
    """The way to other hosts' roles when there is none: their mail waits in the outbox."""

    def __init__(self, remote: Mapping[str, str], why: str) -> None:
        self.roles = remote
        self.why = why

    def send(self, path: str, handoff: message.Handoff, recipients: list[str]) -> None:
        raise SwarmforgeError(f"{', '.join(recipients)} run on another host and {self.why}")


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
        self.stuck: dict[str, str] = {}  # outbox path -> the error last logged for it
        self.unsafe: dict[str, str] = {}  # mailbox root -> why its outbox is left alone
        self.events = events.EventLog(root, on_error=self._event_dropped)
        self._dropping = ""  # the last error that dropped an event, logged once

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
            tracked = waiting.tracked(box.worktree) if found else set()
            files += [(path, os.path.basename(path) in tracked) for path in found]
        self.unsafe = unsafe
        return sorted(files, key=lambda item: os.path.basename(item[0]))

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
                self._stuck(path, str(exc))
                continue
            self._record(outcome)
            if outcome.status == HELD:
                self._stuck(path, outcome.reason)
            else:
                self.stuck.pop(path, None)
            outcomes.append(outcome)
        for path in set(self.stuck) - {path for path, _ in files}:
            del self.stuck[path]
        self.wakeups.send(self.roles, self.paths.root, time.monotonic())
        return outcomes

    def _take_in(self) -> None:
        """Write the mail that came from other hosts into its roles' inboxes."""
        if self.crossing is None:
            return
        for role, got in self.crossing.take():
            if got.status == "delivered":
                self.log.info("delivered %s to %s (from another host)", got.name, role)
                fields = {"name": got.name, "from": got.sender or None, "to": role}
                self.events.emit("handoff-delivered", {**fields, "priority": got.priority or None})
                for problem in got.unchecked:
                    self.log.warning("%s", problem)
                self.events.emit_many(("merge-conflict", c) for c in got.conflicts)
                self.wakeups.add(role)
            elif got.status == "failed":
                self.log.error("failed %s from another host: %s", shown(got.name), got.reason)
                self.events.emit(
                    "handoff-failed", {"name": got.name, "to": role, "reason": got.reason}
                )
            elif got.status == "held":
                self.log.warning("holding %s for %s: %s", shown(got.name), role, got.reason)

    def _stuck(self, path: str, error: str) -> None:
        """Log a file that can be neither delivered nor failed once, not on every pass."""
        if self.stuck.get(path) != error:
            self.log.error("delivering %s failed, will retry: %s", shown(path), error)
            self.stuck[path] = error
            self.events.emit("handoff-held", {"name": os.path.basename(path), "reason": error})

    def _event_dropped(self, exc: OSError) -> None:
        """Log an event log that cannot be written once, not on every event."""
        if str(exc) != self._dropping:
            self.log.warning("events are not recorded: %s", exc)
            self._dropping = str(exc)

    def _record(self, outcome: Outcome) -> None:
        sender = {"from": outcome.sender} if outcome.sender else {}
        if outcome.status == FAILED:
            self.log.error("failed %s: %s", shown(outcome.name), outcome.reason)
            failed = {"name": outcome.name, **sender, "reason": outcome.reason}
            self.events.emit("handoff-failed", failed)
        elif outcome.status == DELIVERED:
            self.log.info(
                "delivered %s to %s",
                outcome.name,
                ",".join(outcome.copied) or "(every copy was already there)",
            )
        elif outcome.status == HELD and outcome.copied:
            self.log.info("delivered %s to %s only", outcome.name, ",".join(outcome.copied))
        for role in outcome.published:
            host = self.remote.get(role) or "the first host"
            self.log.info("sent %s to %s on %s", outcome.name, role, host)
        self.events.emit_many(
            (
                "handoff-sent",
                {"name": outcome.name, **sender, "to": role, "host": self.remote.get(role) or None},
            )
            for role in outcome.published
        )
        self.events.emit_many(
            (
                "handoff-delivered",
                {"name": outcome.name, **sender, "to": role, "priority": outcome.priority or None},
            )
            for role in outcome.copied
        )
        for problem in outcome.unchecked:
            self.log.warning("%s", problem)
        self.events.emit_many(("merge-conflict", fields) for fields in outcome.conflicts)
        for role in outcome.copied:
            self.wakeups.add(role)

    def stop_requested(self) -> bool:
        """True if a stop was asked for by signal or by the stop file.

        A stop file made by hand is consumed; the one a running `stop` holds stays
        until that `stop` has seen every daemon go (handoffd.stop removes it).
        """
        if os.path.lexists(self.paths.stop):
            self.stopping = True
            locks.remove_unless_held(self.paths.stop)
        return self.stopping

    def wait(self) -> None:
        """Sleep until something changes, a wake-up falls due, or the safety rescan."""
        timeout = RESCAN_SECONDS
        due = self.wakeups.next_due()
        if due is not None:
            timeout = max(0.0, min(timeout, due - time.monotonic()))
        self.changed.wait(timeout)
