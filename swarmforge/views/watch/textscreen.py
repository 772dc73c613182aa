"""The text screens of `swarmforge watch`: a role's output, diff or handoff, or the keys."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Log, Static

from swarmforge.text import shown


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
        # Role and branch names, outputs and handoffs are outside text: never markup, and
        # their control characters shown as escapes rather than sent to the terminal.
        yield Static(shown(self.title_text), id="title", markup=False)
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
        log.write("\n".join(shown(line) for line in text.split("\n")))
        if self.every is None:
            log.scroll_home(animate=False)
