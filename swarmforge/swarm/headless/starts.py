"""The runner's starts: each role started when its turn comes, and restarted after it
exits, as its `restart` setting and the `[start]` caps allow.
"""

from __future__ import annotations

import logging
import time

from swarmforge.agents import lifecycle
from swarmforge.errors import shell_status
from swarmforge.swarm.bootstrap import marks
from swarmforge.swarm.headless.child import Child
from swarmforge.swarm.pacer import Pacer


def start_due(
    root: str, run_id: str, children: dict[str, Child], pacer: Pacer, log: logging.Logger
) -> bool:
    """Start, in order, the roles never started yet whose turn has come; True if any did.

    An agent waits for `pacer`, and every agent after it waits too, so they start in
    the order of swarmforge.conf; exec roles start at once.
    """
    changed = False
    held = False
    for name, child in children.items():
        if child.proc is not None or child.finished:
            continue
        if marks.failure(root, name) is not None:
            continue  # until an `up` sets it up again
        if child.agent:
            if held or not pacer.ready():
                held = True
                continue
            pacer.started(name)
        pid = child.start()
        lifecycle.started(root, name, run_id, pid, 0)
        log.info("starting %s: pid %d", name, pid)
        _unlogged(child, log)
        changed = True
    return changed


def restart_exited(
    root: str,
    run_id: str,
    children: dict[str, Child],
    pacer: Pacer,
    log: logging.Logger,
) -> bool:
    """Record each role whose process exited, and restart it when its pause is over and
    `pacer` allows; True if any started."""
    now = time.monotonic()
    changed = False
    for name, child in children.items():
        if child.finished or child.proc is None or child.proc.poll() is None:
            continue
        if child.next_start == 0.0:
            code = shell_status(child.proc.returncode)
            pause = lifecycle.exited(
                root, name, run_id, code, child.tail(), child.policy, child.give_up_after
            )
            if pause is None:
                log.warning("%s exited %s; not restarted", name, code)
                child.finished = True
                continue
            log.warning("%s exited %s; restarting in %.0f s", name, code, pause)
            child.next_start = now + pause
        elif now >= child.next_start and (not child.agent or pacer.ready()):
            # A restart is a start: it counts against `[start]` like the first one.
            if child.agent:
                pacer.started(name)
            child.restarts += 1
            child.next_start = 0.0
            pid = child.start()
            lifecycle.started(root, name, run_id, pid, child.restarts)
            log.info("restarted %s: pid %d", name, pid)
            _unlogged(child, log)
            changed = True
    return changed


def _unlogged(child: Child, log: logging.Logger) -> None:
    if child.unlogged is not None:
        log.warning("%s", child.unlogged)
