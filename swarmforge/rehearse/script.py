"""A rehearsal script: per role, the turns its agent plays and what each turn must show.

A TOML file::

    timeout = 300                 # seconds for the whole rehearsal
    stall = 60                    # seconds an agent may take to run one command

    [[send]]                      # handoffs from `user`, queued once the swarm is up
    to = "coder"
    text = "Add a greeting."

    [[roles.coder.turns]]         # turn 1: the agent's opening prompt
    run = ["echo hi > hi.txt", "git add hi.txt", "git commit -qm hi"]
    say = "Committed."            # the text that ends the turn (default "Done.")
    expect = { output = ["1 file changed"] }

    [[roles.cleaner.turns]]       # a turn begins with each new message the agent gets
    run = ["ready_for_next.sh", "done_with_current.sh"]
    expect = { sent = ["coder"], completed = 1 }

An agent that does not return a command's result within `stall` seconds (it
waits for an approval, say) ends the rehearsal, with its screen in the report.
In tmux, turn 1 answers the agent's opening prompt and every later turn the
next message it receives (a wake-up); with the headless backend, each turn is
one run of the agent for one task or batch it accepted. Each command in `run` is one call of the
agent's own shell tool. `expect` is checked when the turn ends:

- `output`: strings that must appear in what the turn's commands printed;
- `sent`: roles that the role must have queued a handoff to during the turn;
- `completed`: how many received handoffs the role must have completed during it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.records import parse_toml_model

AGENTS = ("claude", "codex")


class Expect(BaseModel):
    """What one turn must show once it ends."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    output: list[str] = []
    sent: list[str] = []
    completed: int = Field(default=0, ge=0)


class Turn(BaseModel):
    """One turn of a role's agent: the commands it runs, then what it says."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run: list[str] = []
    say: str = "Done."
    expect: Expect = Expect()


class Send(BaseModel):
    """A handoff from `user` that starts the work (`swarmforge send`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    to: str
    text: str = Field(min_length=1)
    type: Literal["note"] = "note"


class RoleScript(BaseModel):
    """Every turn one role plays, in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: list[Turn] = Field(min_length=1)


class Script(BaseModel):
    """A whole rehearsal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout: float = Field(default=300.0, gt=0)
    stall: float = Field(default=60.0, gt=0)
    send: list[Send] = []
    roles: dict[str, RoleScript] = Field(min_length=1)


def parse_script(data: bytes, path: str) -> Script:
    """Parse a rehearsal script; CorruptFile names the file and the line or key at fault."""
    return parse_toml_model(data, path, Script)


def load_script(path: str) -> Script:
    """Read the rehearsal script at `path`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SwarmforgeError(f"Cannot read rehearsal script {path}: {exc.strerror}.") from None
    return parse_script(data, path)


def check_roles(script: Script, path: str, agents: dict[str, str]) -> None:
    """Every scripted role is a role of the swarm whose agent is claude or codex.

    `agents` maps each role of swarmforge.conf to its agent; every role a turn
    expects a handoff to must be one of them too.
    """
    for number, send in enumerate(script.send, start=1):
        if send.to not in agents:
            raise CorruptFile(path, None, f"send[{number}].to: no role '{send.to}' in the swarm")
    for name, role in script.roles.items():
        agent = agents.get(name)
        if agent is None:
            known = ", ".join(agents) or "none"
            raise CorruptFile(path, None, f"roles.{name}: no such role in the swarm ({known})")
        if agent not in AGENTS:
            raise CorruptFile(
                path,
                None,
                f"roles.{name}: its agent is '{agent}'; a rehearsal plays claude and codex roles",
            )
        for number, turn in enumerate(role.turns, start=1):
            for target in turn.expect.sent:
                if target not in agents:
                    raise CorruptFile(
                        path,
                        None,
                        f"roles.{name}.turns[{number}].expect.sent: "
                        f"no role '{target}' in the swarm",
                    )
