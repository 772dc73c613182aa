"""The daemon's process: one per project (a lock), its pid file, and its loop until stopped."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path
from types import FrameType

from swarmforge import filewrite, logfile
from swarmforge.daemon.alerts.follower import Follower
from swarmforge.daemon.arrivals import Arrivals
from swarmforge.daemon.capturing import Capturer
from swarmforge.daemon.dispatcher import SWEEP_SECONDS, Dispatcher
from swarmforge.daemon.keeping import Keeper
from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import read_pid
from swarmforge.daemon.wake import Waker
from swarmforge.errors import SwarmforgeError
from swarmforge.locks import FileLock, remove_unless_held


def logger(root: str) -> logging.Logger:
    """The daemon's logger for the project at `root` (its file handler is added by `run`)."""
    return logging.getLogger(f"handoffd:{root}")


def _logger(paths: Paths) -> logging.Logger:
    return logfile.logger(logger(paths.root).name, paths.log)


def run(root: str, waker: Waker, *, once: bool = False) -> int:
    """Run the daemon in this process until stopped (or for one pass); files delivered.

    Another daemon of the project makes this one refuse at once. A daemon that gets
    the lock while a `stop` is in progress exits at once too, leaving its stop file.
    """
    paths = Paths(root)
    with FileLock(paths.lock, what=f"handoffd for {root}", patience=0):
        log = _logger(paths)
        if not remove_unless_held(paths.stop):
            log.info("not starting (pid %d): a stop is in progress", os.getpid())
            return 0
        daemon = Dispatcher(root, waker, log)
        delivered = 0
        try:
            _link(daemon, once)
            filewrite.atomic_write(paths.pid, f"{os.getpid()}\n".encode())
            log.info("started (pid %d, waker %s)", os.getpid(), waker.name)
            daemon.load_roles()
            daemon.sweep()
            delivered = len(daemon.run_once()) if once else _serve(daemon, paths)
            return delivered
        finally:
            if read_pid(paths) == os.getpid():
                Path(paths.pid).unlink()
            log.info("stopped after delivering %d file(s)", delivered)
            if daemon.crossing is not None:
                daemon.crossing.close()
            daemon.changed.close()


def _link(daemon: Dispatcher, once: bool) -> None:
    """With `[transport]` set, give the daemon its way to the roles of other hosts.

    Imported only then: one machine needs neither the settings' transport nor nats-py.
    A broken swarmforge.toml or a missing extra is logged, and local mail still flows.
    """
    from swarmforge.config.settings import load_settings

    try:
        transport = load_settings(daemon.paths.root).transport
    except SwarmforgeError as exc:
        daemon.no_crossing = f"the settings cannot be read: {exc.message}"
        daemon.log.error("mail cannot cross hosts: %s", daemon.no_crossing)
        return
    if transport is None:
        return
    try:
        from swarmforge.daemon.crossing import Crossing
    except ImportError:
        daemon.no_crossing = (
            "[transport] is set but nats-py is missing (pip install 'swarmforge[nats]')"
        )
        daemon.log.error("mail cannot cross hosts: %s", daemon.no_crossing)
        return
    daemon.crossing = Crossing(
        daemon.paths.root, transport, daemon.remote, daemon.log, daemon.changed.set
    )
    daemon.crossing.serve(daemon.roles)
    daemon.crossing.start(wait=5.0 if once else 0.0)


def _capturer(daemon: Dispatcher) -> Capturer | None:
    """The daemon's captures, as `[captures]` has them (the defaults if it cannot be read:
    the settings' problem is the budget check's and the doctor's to report)."""
    from swarmforge.config.capturesettings import CaptureSettings
    from swarmforge.config.settings import load_settings

    try:
        settings = load_settings(daemon.paths.root).captures
    except SwarmforgeError:
        settings = CaptureSettings()
    if not settings.enabled:
        return None

    def worktrees() -> dict[str, str]:
        return {name: entry.path for name, entry in daemon.roles.items()}

    return Capturer(
        daemon.paths.root,
        daemon.log,
        worktrees,
        settings.every_seconds,
        settings.keep,
        settings.keep_seconds,
    )


def _serve(daemon: Dispatcher, paths: Paths) -> int:
    def on_signal(signum: int, frame: FrameType | None) -> None:
        daemon.stopping = True
        daemon.changed.set()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    # The handoff layer stands without the swarm's: only the serving daemon needs this,
    # imported once a stop can be heard (the import takes a moment).
    from swarmforge.daemon.budget.tracker import Tracker

    arrivals = Arrivals(daemon.changed)
    arrivals.start()
    # Notifications follow the event log, whose appends wake this loop: it lies in the
    # same directory as roles.tsv.
    follower = Follower(paths.root, lambda line: daemon.log.warning("%s", line))
    budgets = Tracker(paths.root, daemon.log)  # checks in the background, never raises
    capturer = _capturer(daemon)
    keeper = Keeper(paths.root, daemon.log, daemon.wakeups.add)
    keeper.catch_up(daemon.roles)
    delivered = 0
    first = rang = True
    swept = passed = time.monotonic()
    try:
        while not daemon.stop_requested():
            # The keeper's timer alone wakes it twice a second: then only the keeper looks.
            if rang or daemon.pass_due(passed):
                passed = time.monotonic()
                if daemon.load_roles() or first:
                    watched = [*daemon.outboxes(), str(Path(paths.roles).parent), paths.dir]
                    arrivals.watch(watched)
                    first = False
                outcomes = daemon.run_once()
                delivered += len(outcomes)
                if capturer is not None:
                    for outcome in outcomes:
                        capturer.note([outcome.sender], "handoff-sent")
                        capturer.note(outcome.copied, "handoff-received")
                if daemon.crossing is not None:
                    daemon.crossing.beat()
                follower.poll()
                budgets.poll()
            if capturer is not None:
                capturer.poll()
            keeper.poll(daemon.roles)
            if daemon.stop_requested():
                break
            if time.monotonic() - swept > SWEEP_SECONDS:
                daemon.sweep()
                swept = time.monotonic()
            due = keeper.next_due()
            if capturer is not None and capturer.next_due() is not None:
                due = min(due, capturer.next_due() or due)
            rang = daemon.wait(due)
    finally:
        arrivals.stop()
        budgets.wait()  # a check under way records and reports its crossings
        if capturer is not None:
            capturer.finish()  # the captures asked for are taken, none left half-made
        follower.wait()  # notifications on their way are sent, not lost with the daemon
    return delivered
