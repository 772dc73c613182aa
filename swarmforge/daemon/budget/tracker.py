"""The daemon's budget check (`Tracker`): every so often, in a thread beside delivery."""

from __future__ import annotations

import logging
import threading
import time

from swarmforge.daemon.budget.check import check
from swarmforge.errors import SwarmforgeError

CHECK_SECONDS = 30.0  # how often the daemon checks the budgets of a running swarm


class Tracker:
    """The daemon's budget check: at most every `every` seconds, in a background thread."""

    def __init__(self, root: str, log: logging.Logger, every: float = CHECK_SECONDS) -> None:
        self.root = root
        self.log = log
        self.every = every
        self._due = 0.0  # the first pass checks at once
        self._thread: threading.Thread | None = None
        self._said = ""  # the last problem logged: a lasting one is logged once

    def poll(self) -> None:
        """Start a check if one is due and none is under way; never raises, never waits."""
        try:
            now = time.monotonic()
            if now < self._due or (self._thread is not None and self._thread.is_alive()):
                return
            self._due = now + self.every
            self._thread = threading.Thread(target=self._check, name="budget-check", daemon=True)
            self._thread.start()
        except Exception:
            self.log.exception("budget check not started")

    def wait(self, timeout: float = 5.0) -> None:
        """Let a check under way finish (the daemon does, before it exits)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _check(self) -> None:
        try:
            check(self.root, lambda line: self.log.warning("%s", line))
        except SwarmforgeError as exc:
            self._problem(exc.message)
        except OSError as exc:
            self._problem(str(exc))
        except Exception:
            self.log.exception("budget check failed")
        else:
            self._said = ""

    def _problem(self, text: str) -> None:
        """Log a problem, unless it is the one the last check logged (a broken settings
        file would otherwise fill the log every `every` seconds)."""
        if text != self._said:
            self.log.warning("budget check: %s", text)
        self._said = text
