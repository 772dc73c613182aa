"""Program-status reports (OSC 7501) an agent writes to its terminal, as found in its pane log.

codex reports its state to its terminal whenever it changes: working, blocked
(waiting), idle or done. The last report is the agent's word about itself, known
from when it was first seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from swarmforge.agents.hints import Hint
from swarmforge.agents.state import State

# A program-status report (OSC 7501): `ESC ] 7501 ; state=<word>[:key=value...]`, ended
# by ST or BEL (one still being written is not one yet). Its words as states; `clear`
# (no status) says nothing.
_REPORT = re.compile(rb"\x1b\]7501;state=([a-z]+)((?::[a-z]+=[^:\x07\x1b]*)*)(?:\x1b\\|\x07)")
REPORTED: dict[str, State] = {
    "working": "working",
    "blocked": "waiting",  # for an approval, a question or a login
    "idle": "idle",
    "done": "idle",
    "error": "idle",
}


@dataclass(frozen=True)
class Found:
    """A status report found in a pane log: where it starts, the state it says, whose it is."""

    offset: int
    state: State
    source: str


def last_report(data: bytes, start: int) -> Found | None:
    """The last status report in `data`, the log's bytes from offset `start`, that says a state."""
    for match in reversed(list(_REPORT.finditer(data))):
        state = REPORTED.get(match[1].decode())
        if state is None:
            continue  # `clear`, or a word of a later version
        fields = dict(f.split(b"=", 1) for f in match[2].split(b":") if b"=" in f)
        app = fields.get(b"app", b"").decode(errors="replace")
        source = f"{app} terminal status" if app else "its terminal status"
        return Found(start + match.start(), state, source)
    return None


class Report(BaseModel):
    """The last status report seen in a role's pane log, and when it was first seen there."""

    model_config = ConfigDict(extra="forbid")

    offset: int
    state: State
    source: str
    at: float

    def hint(self) -> Hint:
        """The report as the agent's word about itself."""
        return Hint(self.state, self.at, self.source)
