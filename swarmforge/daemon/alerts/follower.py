"""The daemon's notifications: the event log's new events, fed to the command [notify] names."""

from __future__ import annotations

from pathlib import Path

from swarmforge import eventread, events
from swarmforge.daemon.alerts.command import Alerts, Log
from swarmforge.errors import SwarmforgeError


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
            st = Path(settings_path(self.root)).stat()
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
