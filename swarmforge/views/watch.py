"""`swarmforge watch`: a live terminal view of the swarm, read-only, built on Textual.

The data comes from watchdata.py, read when feed.py says it may have changed; this
module only lays it out and maps keys. Reading the roles' status costs git calls per
role, and with `[transport]` sometimes a question to the NATS server, so it runs in a
worker thread, never two at once, and the UI thread only paints what it returns;
between reads it only ages what it shows, every 2 s. With `[transport]` the table
gets a host column and a row per role of another host, and a line under the summary
names every host.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Log, Static

from swarmforge import events, proc
from swarmforge.swarm.hoststatus import RemoteRole, beat_said, elsewhere, hosts_line
from swarmforge.times import duration
from swarmforge.views import watchdata
from swarmforge.views.attach import attach_command
from swarmforge.views.feed import EVERY, Feed
from swarmforge.views.watchdata import Row, Snapshot, aged_snapshot, spent

COLUMNS = (
    *("role", "state", "for", "queue", "oldest", "current"),
    *("port", "branch", "ahead", "dirty", "tokens"),
)
HOST_COLUMN = "host"  # only with [transport]: after the role
TICK = 2.0  # seconds between two agings of what is shown: a repaint, never a read
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


def cells(row: Row) -> tuple[str, ...]:
    """The table cells of one role."""
    known = [row.ahead, row.dirty]
    return (
        row.role,
        row.state,
        duration(row.state_age),
        str(row.queued),
        duration(row.oldest_age) if row.queued else "-",
        row.current or "-",
        str(row.port),
        row.branch,
        *("-" if n is None else str(n) for n in known),
        spent(row),
    )


def remote_cells(role: RemoteRole) -> tuple[str, ...]:
    """The table cells of another host's role, host column included: what only its host
    can know (queue, item in hand, commits ahead, dirty files, tokens) is `-`."""
    port = "-" if role.port is None else str(role.port)
    unknown = ("-",) * 4  # for, queue, oldest, current
    after = ("-",) * 3  # ahead, dirty, tokens
    return (role.role, role.host, beat_said(role), *unknown, port, role.branch or "-", *after)


def columns(snap: Snapshot) -> tuple[str, ...]:
    """The table's columns: a host column after the role's with `[transport]`."""
    return COLUMNS if snap.cross is None else (COLUMNS[0], HOST_COLUMN, *COLUMNS[1:])


def lines(snap: Snapshot) -> list[tuple[str, tuple[str, ...]]]:
    """Every row of the table as (key, cells): this host's roles keyed by name, then the
    other hosts' as ROLE@HOST (two hosts may still both report a role that moved)."""
    if snap.cross is None:
        return [(r.role, cells(r)) for r in snap.rows]
    here = snap.cross.this_host
    local = [(r.role, (r.role, here, *cells(r)[1:])) for r in snap.rows]
    return local + [(remote_key(r), remote_cells(r)) for r in snap.cross.roles]


def remote_key(role: RemoteRole) -> str:
    """The table key of another host's role."""
    return f"{role.role}@{role.host}"


def summary(snap: Snapshot) -> str:
    """The line above the table: the project and its run."""
    if snap.run_id is None:
        return f"No swarm is running in {snap.project}: `swarmforge up` starts one."
    elsewhere = f" (+{len(snap.cross.roles)} on other hosts)" if snap.cross else ""
    return (
        f"{snap.project}  run {snap.run_id} ({snap.backend}) {snap.state}"
        f"  base {snap.base}  {len(snap.rows)} roles{elsewhere}"
    )


class Poked(Message):
    """The project may have changed (sent from the feed's watch thread)."""


class TextScreen(Screen[None]):
    """A scrollable text: a role's output, diff or handoff, or the keys; `reload` refreshes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "back"),
        Binding("q", "app.pop_screen", "back"),
    ]

    def __init__(self, title: str, load: Callable[[], str], every: float | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.load = load
        self.every = every

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, id="title")
        yield Log(id="text", auto_scroll=self.every is not None)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Log).focus()
        self.reload()
        if self.every is not None:
            self.set_interval(self.every, self.reload)

    @work(thread=True, exclusive=True, group="text")
    def reload(self) -> None:
        text = self.load()
        self.app.call_from_thread(self._show, text)

    def _show(self, text: str) -> None:
        log = self.query_one(Log)
        log.clear()
        log.write(text)
        if self.every is None:
            log.scroll_home(animate=False)


class WatchApp(App[None]):
    """The live view of the swarm of the project at `root`."""

    TITLE = "swarmforge watch"
    CSS = """
    #summary, #title { height: 1; background: $boost; }
    #hosts { height: auto; color: $text-muted; }
    #roles { height: auto; max-height: 60%; }
    #events { height: 1fr; border-top: solid $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "output", "output"),
        Binding("d", "diff", "diff"),
        Binding("h", "handoff", "handoff"),
        Binding("a", "attach", "attach"),
        Binding("r", "refresh", "refresh"),
        Binding("question_mark", "keys", "keys"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, root: str, every: float = EVERY) -> None:
        super().__init__()
        self.root = root
        self.feed = Feed(root, every)
        self.snap: Snapshot | None = None  # as last read
        self.snap_at = 0.0  # when it was read (time.monotonic)
        self.painted: Snapshot | None = None  # as last shown: aged since it was read
        self.busy = False  # a read is under way in its thread
        self.next: Timer | None = None  # the read to come when nothing announces one
        self.said: dict[str, str] = {}  # the text of each Static, as last put there

    def compose(self) -> ComposeResult:
        yield Static("reading the swarm's status...", id="summary")
        hosts = Static("", id="hosts")
        hosts.display = False  # shown with [transport] only
        yield hosts
        table: DataTable[str] = DataTable(id="roles", cursor_type="row", zebra_stripes=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield Log(id="events", max_lines=watchdata.EVENTS_KEPT)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.action_refresh()
        self.set_interval(TICK, self._tick)

    def on_unmount(self) -> None:
        self.feed.stop()

    def _poke(self) -> None:
        self.post_message(Poked())  # from the feed's thread: post_message is thread-safe

    def on_poked(self, _: Poked) -> None:
        self._consider()

    def _consider(self) -> None:
        """Read now if a read is due, else be back when the next one is."""
        if self.busy:
            return  # looked at again when the read under way ends
        if self.next is not None:
            self.next.stop()
            self.next = None
        wait = self.feed.due_in()
        if wait <= 0:
            self.busy = True
            self._gather()
        elif wait != float("inf"):
            self.next = self.set_timer(wait, self._consider)

    def action_refresh(self) -> None:
        self.feed.touch()
        self._consider()

    @work(thread=True, group="gather")
    def _gather(self) -> None:
        self.feed.start(self._poke)  # here: watching a big worktree begins with a walk of it
        snap, found = self.feed.read()
        self.call_from_thread(self._show, snap, [events.line(e) for e in found])

    def _show(self, snap: Snapshot | str, lines: list[str]) -> None:
        self.busy = False
        self.query_one(Log).write_lines(lines)
        if isinstance(snap, str):
            self.snap = self.painted = None  # nothing to age or act on; repainted whole next
            self._say("#summary", snap)
        else:
            self.snap, self.snap_at = snap, time.monotonic()
            self._paint(snap)
        self._consider()

    def _tick(self) -> None:
        if self.snap is not None:
            self._paint(aged_snapshot(self.snap, int(time.monotonic() - self.snap_at)))

    def _paint(self, snap: Snapshot) -> None:
        """Show `snap`: only what reads differently from what is shown is repainted."""
        if snap == self.painted:
            return
        before, self.painted = self.painted, snap
        self._say("#summary", summary(snap))
        hosts = self.query_one("#hosts", Static)
        if hosts.display != (snap.cross is not None):
            hosts.display = snap.cross is not None
        if snap.cross is not None:
            self._say("#hosts", hosts_line(snap.cross))
        with self.batch_update():  # one repaint for every cell that changed
            self._fill(before, snap)

    def _say(self, where: str, text: str) -> None:
        """Put `text` in the Static at `where` unless it says that already."""
        if self.said.get(where) != text:
            self.said[where] = text
            self.query_one(where, Static).update(text)

    def _fill(self, before: Snapshot | None, snap: Snapshot) -> None:
        """Paint the table: only the cells that changed when the rows are the same."""
        table: DataTable[str] = self.query_one(DataTable)
        shown, wanted = columns(snap), lines(snap)
        keys = [key for key, _ in wanted]
        if before is not None and columns(before) == shown:
            old = lines(before)
            if [key for key, _ in old] == keys:
                # The same roles: only the cells that changed (ages move every second)
                # are redrawn, not the whole table, and the cursor stays where it is.
                for (key, was_cells), (_, now_cells) in zip(old, wanted, strict=True):
                    for column, was, now in zip(shown, was_cells, now_cells, strict=True):
                        if was != now:
                            table.update_cell(key, column, now)
                return
        chosen = self.selected()
        table.clear(columns=before is None or columns(before) != shown)
        if not table.columns:
            for column in shown:
                table.add_column(column, key=column)
        for key, row_cells in wanted:
            table.add_row(*row_cells, key=key)
        if chosen in keys:
            table.move_cursor(row=keys.index(chosen), animate=False)

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
            self.notify(elsewhere(there))
            return None
        return next((r for r in self.snap.rows if r.role == name), None)

    def action_output(self) -> None:
        row = self._row()
        if row is not None:
            load = partial(watchdata.output, self.root, row.role)
            self.push_screen(TextScreen(f"{row.role}: live output", load, every=1.0))

    def action_diff(self) -> None:
        row, snap = self._row(), self.snap
        if row is not None and snap is not None:
            load = partial(watchdata.diff, snap.project, snap.base, row.branch)
            self.push_screen(TextScreen(f"{row.role}: {snap.base}...{row.branch}", load))

    def action_handoff(self) -> None:
        row = self._row()
        if row is not None:
            load = partial(watchdata.handoff, row.current_path)
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
        if proc.which(argv[0]) is None:  # not installed as a command: this interpreter's own
            argv = [sys.executable, "-m", "swarmforge", *argv[1:]]
        try:
            with self.suspend():
                code = proc.start(argv).wait()
        except SuspendNotSupported:
            self.notify(f"Cannot hand this terminal over here; run: {shlex.join(argv)}")
            return
        if code != 0:
            self.notify(f"{shlex.join(argv)} exited {code}", severity="error")
