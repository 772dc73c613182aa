"""A terminal's screen replayed from the bytes it was sent: what a person saw, as plain text."""

from __future__ import annotations

from collections import deque

import pyte
from pyte.screens import Char, Margins, StaticDefaultDict

COLUMNS = 200  # wide enough that an agent's lines are not wrapped where its terminal did not
ROWS = 100  # taller than the terminals agents run in: a cursor move is never clamped


class _Screen(pyte.Screen):
    """A screen that keeps the last `kept` lines scrolled off its top, as a terminal's
    scrollback does. (pyte's HistoryScreen does too, but wraps every attribute lookup:
    it plays a log several times slower.)"""

    def __init__(self, kept: int) -> None:
        super().__init__(COLUMNS, ROWS)
        self.scrolled: deque[StaticDefaultDict[int, Char]] = deque(maxlen=kept)

    def index(self) -> None:
        top, bottom = self.margins or Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0:  # the whole screen scrolls, not a region
            self.scrolled.append(self.buffer[top])
        super().index()


def screen_lines(data: bytes, lines: int) -> list[str]:
    """The last `lines` lines of the screen and its scrollback once `data` was shown."""
    screen = _Screen(lines)
    # A line feed also returns the cursor: a log written without a terminal ends lines
    # with a bare "\n", which a terminal would have turned into "\r\n".
    screen.set_mode(pyte.modes.LNM)
    pyte.ByteStream(screen).feed(data)
    found = ["".join(line[x].data for x in range(COLUMNS)).rstrip() for line in screen.scrolled]
    found += [row.rstrip() for row in screen.display]
    while found and not found[-1]:
        found.pop()
    return found[-lines:]
