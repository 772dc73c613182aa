"""The keys of `swarmforge watch`: the role each acts on, and what each shows of it.

On a role of another host these keys say which host runs it; `a` hands the terminal
over to the role's tmux session and takes it back when the person detaches.
"""

from __future__ import annotations

import shlex
import sys
from functools import partial
from typing import ClassVar

from textual.app import App, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from swarmforge import text
from swarmforge.proc import popen, spawn
from swarmforge.swarm.status.hostlines import elsewhere
from swarmforge.views import roletexts
from swarmforge.views.attach import attach_command
from swarmforge.views.rows import Row
from swarmforge.views.snapshot import Snapshot
from swarmforge.views.watch.table import remote_key
from swarmforge.views.watch.textscreen import TextScreen

KEYS = """\
up/down   select a role
o         the selected role's live output (.swarmforge/logs/ROLE.log)
d         its diff against the base branch (--stat, then the diff)
h         the handoff it has in hand
a         attach this terminal to its tmux session (back here when you detach)
          (on a role of another host, these four say which host runs it)
r         refresh now
escape    back from a view
?         these keys
q         quit (the swarm keeps running)"""


class RoleKeys(App[None]):
    """The key bindings of the watch app, and the actions on the selected role."""

    root: str  # the project
    snap: Snapshot | None  # the swarm as last read

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "output", "output"),
        Binding("d", "diff", "diff"),
        Binding("h", "handoff", "handoff"),
        Binding("a", "attach", "attach"),
        Binding("r", "refresh", "refresh"),
        Binding("question_mark", "keys", "keys"),
        Binding("q", "quit", "quit"),
    ]

    def selected(self) -> str | None:
        """The role whose row the cursor is on."""
        table: DataTable[str] = self.query_one(DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def _row(self) -> Row | None:
        """The selected role of this host; None (and a line saying why) otherwise."""
        name = self.selected()
        if self.snap is None or name is None:
            self.notify("No role to show: no swarm is running.", severity="warning")
            return None
        cross = self.snap.cross
        there = next((r for r in cross.roles if remote_key(r) == name), None) if cross else None
        if there is not None:
            self.notify(text.shown(elsewhere(there)), markup=False)
            return None
        return next((r for r in self.snap.rows if r.role == name), None)

    def action_output(self) -> None:
        row = self._row()
        if row is not None:
            load = partial(roletexts.output, self.root, row.role)
            self.push_screen(TextScreen(f"{row.role}: live output", load, every=1.0))

    def action_diff(self) -> None:
        row, snap = self._row(), self.snap
        if row is not None and snap is not None:
            load = partial(roletexts.diff, snap.project, snap.base, row.branch)
            self.push_screen(TextScreen(f"{row.role}: {snap.base}...{row.branch}", load))

    def action_handoff(self) -> None:
        row = self._row()
        if row is not None:
            load = partial(roletexts.handoff, row.current_path)
            self.push_screen(TextScreen(f"{row.role}: the handoff in hand", load))

    def action_keys(self) -> None:
        self.push_screen(TextScreen("keys", lambda: KEYS))

    def action_attach(self) -> None:
        row = self._row()
        if row is None or self.snap is None:
            return
        argv = attach_command(self.root, row.role)
        if self.snap.backend == "headless":
            self.notify("The swarm runs headless: no terminal to attach to; o shows its output.")
            return
        if spawn.which(argv[0]) is None:  # not installed as a command: this interpreter's own
            argv = [sys.executable, "-m", "swarmforge", *argv[1:]]
        try:
            with self.suspend():
                code = popen.start(argv).wait()
        except SuspendNotSupported:
            said = f"Cannot hand this terminal over here; run: {shlex.join(argv)}"
            self.notify(text.shown(said), markup=False)
            return
        if code != 0:
            said = f"{shlex.join(argv)} exited {code}"
            self.notify(text.shown(said), severity="error", markup=False)
