"""Running the user's notification command: in the background, a burst of events at a time."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable

from swarmforge.daemon.alerts.triggers import Event, payload, trigger_of
from swarmforge.proc import popen

BURST = 2.0  # seconds a notification waits for more events of its trigger
TIMEOUT = 30.0  # seconds a notification command may take before it is killed

Log = Callable[[str], None]


class Alerts:
    """Runs `command` for the events of the `chosen` triggers, a burst at a time."""

    def __init__(
        self,
        command: list[str],
        chosen: Iterable[str],
        *,
        cwd: str,
        log: Log,
        burst: float = BURST,
        timeout: float = TIMEOUT,
    ) -> None:
        # The ready-made commands run with this interpreter's swarmforge, on PATH or not.
        if command[:1] == ["swarmforge"]:
            command = [sys.executable, "-m", "swarmforge", *command[1:]]
        self.command = command
        self.chosen = tuple(chosen)
        self.cwd = cwd
        self.log = log
        self.burst = burst
        self.timeout = timeout
        self._lock = threading.Lock()
        self._pending: dict[str, list[Event]] = {}
        self._threads: list[threading.Thread] = []

    def feed(self, events: Iterable[Event]) -> None:
        """Take new events; never blocks on a command."""
        for event in events:
            trigger = trigger_of(event, self.chosen)
            if trigger is None:
                continue
            with self._lock:
                waiting = self._pending.get(trigger)
                if waiting is not None:
                    waiting.append(dict(event))  # joins the burst already on its way
                    continue
                self._pending[trigger] = [dict(event)]
            thread = threading.Thread(
                target=self._notify, args=(trigger,), name=f"notify-{trigger}", daemon=True
            )
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def wait(self, timeout: float = BURST + TIMEOUT + 5) -> None:
        """Let the notifications on their way finish (the daemon does, before it exits)."""
        deadline = time.monotonic() + timeout
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))

    def _notify(self, trigger: str) -> None:
        time.sleep(self.burst)
        with self._lock:
            events = self._pending.pop(trigger)
        data = json.dumps(payload(trigger, events)).encode() + b"\n"
        try:
            child = popen.start(
                self.command,
                cwd=self.cwd,
                stdin=popen.PIPE,
                stdout=popen.DEVNULL,
                stderr=popen.PIPE,
                session=True,
            )
        except OSError as exc:
            self.log(f"notification for {trigger} could not start {self.command[0]}: {exc}")
            return
        wrong = self._outcome(child, data)
        if wrong:
            self.log(f"notification for {trigger}: {self.command[0]} {wrong}")

    def _outcome(self, child: popen.Started, data: bytes) -> str | None:
        """Feed `data` to `child` and wait for it: what went wrong, or None."""
        with child:  # its pipes closed and it waited for, whatever happens
            try:
                _, err = child.communicate(data, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _end(child)
                return f"took over {self.timeout:g} s and was ended"
            except OSError as exc:  # its stdin failed otherwise than by its leaving
                _end(child)
                return f"could not be given the event: {exc}"
        code = child.returncode
        if code < 0:
            return f"was ended by signal {-code} ({signal.Signals(-code).name})"
        if code != 0:
            said = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            return f"exited {code}" + (f": {said[0]}" if said[0] else "")
        return None


def _end(child: popen.Started) -> None:
    """Kill `child` with whatever it started (its own session): hung notifications must
    not pile up."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
