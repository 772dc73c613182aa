"""A command the spawner started: its process, its output so far, and how it ended."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swarmforge.proc.popen import Started


class Child:
    """One command: running, finished, or that could not be started (`error`)."""

    __slots__ = ("closed_at", "code", "err", "error", "key", "open", "out", "pid", "proc")

    def __init__(self, key: Hashable, started: Started | None = None) -> None:
        self.key = key
        self.proc = started
        self.pid = started.pid if started is not None else -1
        self.out, self.err = bytearray(), bytearray()
        self.open = 2 if started is not None else 0  # its pipes not yet at end of file
        self.closed_at = 0.0
        self.code: int | None = None
        self.error: OSError | None = None

    @property
    def finished(self) -> bool:
        """Exited and both pipes drained."""
        return self.code is not None and self.open == 0
