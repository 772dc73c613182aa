"""Notifications: a command of the user's, run on the events they chose, with the event on stdin.

The delivery daemon follows the project's event log (swarmforge/events.py) and hands
every new event to `Alerts.feed`. An event that matches a chosen trigger starts the
user's command with the event as JSON on its stdin, in the background: a command
that hangs, fails or floods never blocks or fails a delivery. Events of one trigger
that arrive while a notification for it is still pending (within `BURST` seconds)
are coalesced: the command runs once for the burst, with `count` and every event.

Triggers, as `[notify] on = [...]` names them:

    waiting, stalled, exited      an agent-state event with that state (exited also:
                                  agent-exited)
    handoff-failed, run-finished  the event of that kind
    budget-crossed                the event of that kind: a role, or the whole swarm, has
                                  spent its token budget for the run (daemon/budget.py)
    any other name                the event of that kind, as docs/events.md lists them

Left out, `on` chooses every trigger named above.

Two ready-made commands read that JSON: `swarmforge notify-send` shows it on the
desktop (through `notify-send`), and `swarmforge bell` rings the terminal of
everyone attached to the swarm's tmux sessions.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping

from swarmforge import eventline, eventread, events
from swarmforge.errors import SwarmforgeError
from swarmforge.proc import popen, spawn

BURST = 2.0  # seconds a notification waits for more events of its trigger
TIMEOUT = 30.0  # seconds a notification command may take before it is killed
STATES = ("waiting", "stalled", "exited")

Event = Mapping[str, object]
Log = Callable[[str], None]


def trigger_of(event: Event, chosen: Iterable[str]) -> str | None:
    """The chosen trigger `event` fires, or None."""
    kind = event.get("kind")
    for name in chosen:
        if name in STATES:
            if kind == "agent-state" and event.get("state") == name:
                return name
            if name == "exited" and kind == "agent-exited":
                return name
        elif kind == name:
            return name
    return None


def payload(trigger: str, events: list[Event]) -> dict[str, object]:
    """What the command gets on stdin: the event itself, or for a burst, all of them."""
    if len(events) == 1:
        return {"trigger": trigger, **events[0]}
    return {"trigger": trigger, "count": len(events), "events": events}


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


class Follower:
    """The delivery daemon's view of notifications: new events of the log, fed to the
    command that swarmforge.toml's [notify] names (re-read when the file changes)."""

    def __init__(self, root: str, log: Log) -> None:
        self.root = root
        self.log = log
        self.path = events.log_path(root)
        # Only what happens from now on notifies: start at the log's current end.
        self.offset = eventread.tail(self.path, 0).end  # the end, found without reading it all
        self.line = 0
        self.alerts: Alerts | None = None
        self._loaded = False
        self._settings_stamp: tuple[int, int] | None = None

    def poll(self) -> None:
        """Feed the events appended since the last poll."""
        self._load()
        chunk = eventread.read(self.path, self.offset, self.line)
        self.offset, self.line = chunk.end, chunk.lines
        if self.alerts is not None and chunk.events:
            self.alerts.feed(chunk.events)

    def wait(self) -> None:
        if self.alerts is not None:
            self.alerts.wait()

    def _load(self) -> None:
        from swarmforge.config.settings import load_settings, settings_path

        try:
            st = os.stat(settings_path(self.root))
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        if self._loaded and stamp == self._settings_stamp:
            return
        self._loaded, self._settings_stamp = True, stamp
        try:
            notify = load_settings(self.root).notify
        except SwarmforgeError as exc:
            self.log(f"notifications off: {exc.message}")
            self.alerts = None
            return
        if not notify.command:
            self.alerts = None
            return
        self.alerts = Alerts(list(notify.command), notify.on, cwd=self.root, log=self.log)


def summary(note: Mapping[str, object]) -> tuple[str, str]:
    """A title and one line of text for the notification `note` (see `payload`)."""
    trigger = str(note.get("trigger") or note.get("kind") or "event")
    burst = note.get("events")
    if isinstance(burst, list) and burst and isinstance(burst[0], dict):
        return f"swarmforge: {note.get('count')} x {trigger}", eventline.line(burst[-1])
    return f"swarmforge: {trigger}", eventline.line(note)


def notify_send(data: str) -> None:
    """Show the notification whose JSON is `data` on the desktop, through notify-send."""
    title, text = summary(_note(data))
    done = spawn.run(["notify-send", "--app-name=swarmforge", title, text])
    if not done.ok:
        said = done.stderr.decode(errors="replace").strip()
        raise SwarmforgeError(f"notify-send failed: {said or f'exit {done.returncode}'}")


def bell(root: str) -> int:
    """Ring the terminal of every tmux client attached to the swarm of `root`; how many."""
    from swarmforge.tmux.server import Tmux, project_socket

    return sum(ring(tty) for tty in Tmux(project_socket(root)).client_ttys())


def ring(tty: str) -> bool:
    """Write the bell character to terminal `tty`; False if it cannot be written."""
    try:
        fd = os.open(tty, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.write(fd, b"\a") == 1
    except OSError:
        return False
    finally:
        os.close(fd)


def _note(data: str) -> Mapping[str, object]:
    try:
        note = json.loads(data)
    except ValueError:
        note = None
    if not isinstance(note, dict):
        raise SwarmforgeError("Expected a notification as a JSON object on stdin.")
    return note
