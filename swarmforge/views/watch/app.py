"""The app of `swarmforge watch`: it reads the swarm in a worker thread when the feed says a
read is due, and repaints only what reads differently."""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Log, Static

from swarmforge import eventline, text
from swarmforge.swarm.status.hostlines import hosts_line
from swarmforge.views.aging import aged_snapshot
from swarmforge.views.eventtail import EVENTS_KEPT
from swarmforge.views.feed import EVERY, Feed
from swarmforge.views.snapshot import Snapshot
from swarmforge.views.watch.keys import RoleKeys
from swarmforge.views.watch.table import COLUMNS, columns, lines, literal, summary

TICK = 2.0  # seconds between two agings of what is shown: a repaint, never a read


class Poked(Message):
    """The project may have changed (sent from the feed's watch thread)."""


class WatchApp(RoleKeys):
    """The live view of the swarm of the project at `root`."""

    TITLE = "swarmforge watch"
    CSS = """
    #summary, #title { height: 1; background: $boost; }
    #hosts { height: auto; color: $text-muted; }
    #roles { height: auto; max-height: 60%; }
    #events { height: 1fr; border-top: solid $primary; }
    """

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
        # Paths, branches and host names are outside text: never read as markup.
        yield Static("reading the swarm's status...", id="summary", markup=False)
        hosts = Static("", id="hosts", markup=False)
        hosts.display = False  # shown with [transport] only
        yield hosts
        table: DataTable[Text] = DataTable(id="roles", cursor_type="row", zebra_stripes=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        yield table
        yield Log(id="events", max_lines=EVENTS_KEPT)
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
        self.call_from_thread(self._show, snap, [eventline.line(e) for e in found])

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

    def _say(self, where: str, words: str) -> None:
        """Put `words` in the Static at `where` unless it says that already."""
        if self.said.get(where) != words:
            self.said[where] = words
            self.query_one(where, Static).update(text.shown(words))

    def _fill(self, before: Snapshot | None, snap: Snapshot) -> None:
        """Paint the table: only the cells that changed when the rows are the same."""
        table: DataTable[Text] = self.query_one(DataTable)
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
                            table.update_cell(key, column, literal(now))
                return
        chosen = self.selected()
        table.clear(columns=before is None or columns(before) != shown)
        if not table.columns:
            for column in shown:
                table.add_column(column, key=column)
        for key, row_cells in wanted:
            table.add_row(*map(literal, row_cells), key=key)
        if chosen in keys:
            table.move_cursor(row=keys.index(chosen), animate=False)
