"""One role of a rehearsal: its scripted turns played one move at a time, and each turn's
expectations checked against the role's mailbox and its commands' output when it ends."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from swarmforge.errors import CorruptFile
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.rehearse.script import Turn
from swarmforge.rehearse.wire import Reply

UNSCRIPTED = "Nothing more is scripted for this role."


@dataclass
class Played:
    """One turn as it went."""

    number: int
    prompt: str
    commands: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    finished: bool = False
    sent: list[str] = field(default_factory=list)  # recipients of handoffs queued meanwhile
    received: list[str] = field(default_factory=list)  # senders of handoffs completed meanwhile


@dataclass(frozen=True)
class Mark:
    """What a role's mailbox held when a turn began."""

    queued: frozenset[str]
    completed: frozenset[str]


def _queued(box: Mailbox) -> set[str]:
    return set(box.items(Box.OUTBOX) + box.items(Box.SENT) + box.items(Box.FAILED))


def _header(path: str, name: str) -> str:
    try:
        return message.read(path).get(name) or ""
    except (OSError, CorruptFile):
        return ""  # moved on meanwhile, or not ours to judge here


class Stage:
    """One role: its scripted turns and how far it got."""

    def __init__(self, role: str, turns: list[Turn], worktree: str) -> None:
        self.role = role
        self.turns = turns
        self.box = Mailbox(worktree)
        self.played: list[Played] = []
        self.unscripted = 0
        self.mark = Mark(frozenset(), frozenset())
        self.waiting_since: float | None = None  # a command went out; its result has not come

    @property
    def current(self) -> Played | None:
        """The turn in progress, if any."""
        if self.played and not self.played[-1].finished:
            return self.played[-1]
        return None

    def done(self) -> bool:
        """True once every scripted turn has ended."""
        return len(self.played) == len(self.turns) and all(p.finished for p in self.played)

    def open(self, prompt: str) -> Reply:
        """Begin the next turn; its first move."""
        if self.current is not None:
            # A new message in the middle of a turn: what is left of the turn is skipped.
            self.close(self.current, interrupted=True)
        if len(self.played) == len(self.turns):
            self.unscripted += 1
            return Reply(text=UNSCRIPTED)
        self.mark = Mark(frozenset(_queued(self.box)), frozenset(self.box.received(Box.COMPLETED)))
        self.played.append(Played(len(self.played) + 1, prompt))
        return self.next_move(self.played[-1])

    def next_move(self, turn: Played) -> Reply:
        """The turn's next command, or its closing text once all have run."""
        script = self.turns[turn.number - 1]
        if len(turn.commands) < len(script.run):
            command = script.run[len(turn.commands)]
            turn.commands.append(command)
            self.waiting_since = time.monotonic()
            return Reply(command=command)
        self.close(turn)
        return Reply(text=script.say)

    def carry_on(self, output: str, running: int | None = None) -> Reply:
        """A command's result came back; the turn's next move. A command that still
        runs (in codex's session `running`) is waited on before the turn goes on."""
        turn = self.current
        if turn is None:
            self.waiting_since = None
            return Reply(text=UNSCRIPTED)
        turn.outputs.append(output)
        if running is not None:
            return Reply(poll=running)
        self.waiting_since = None
        return self.next_move(turn)

    def close(self, turn: Played, interrupted: bool = False) -> None:
        """End `turn`, checking what it had to show."""
        turn.finished = True
        self.waiting_since = None
        expect = self.turns[turn.number - 1].expect
        new = sorted(_queued(self.box) - self.mark.queued)
        turn.sent = [r for path in new for r in _header(path, "to").split(",") if r]
        done = sorted(set(self.box.received(Box.COMPLETED)) - self.mark.completed)
        turn.received = [_header(path, "from") for path in done]
        where = f"role {self.role}, turn {turn.number}"
        if interrupted:
            turn.problems.append(f"{where}: a new message arrived before its commands all ran")
        printed = "\n".join(turn.outputs)
        for text in expect.output:
            if text not in printed:
                turn.problems.append(f"{where}: expected {text!r} in the commands' output")
        for target in expect.sent:
            if target not in turn.sent:
                turn.problems.append(f"{where}: expected a handoff to {target}; none was queued")
        if len(done) < expect.completed:
            turn.problems.append(
                f"{where}: expected {expect.completed} completed handoff(s), found {len(done)}"
            )
