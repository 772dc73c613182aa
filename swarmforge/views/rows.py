"""One role as a view's table shows it: its state, queue, item in hand, branch and tokens.

Read from the role's status (swarm/status/role.py) and a few git calls; nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swarmforge import times
from swarmforge.git import command
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.swarm.status.role import RoleStatus


@dataclass(frozen=True)
class Row:
    """One role as the view's table shows it."""

    role: str
    state: str  # the agent's state, else `up`, `down` or `stopped`
    state_age: int | None  # seconds in that state
    queued: int
    oldest_age: int | None  # seconds since the oldest queued item arrived
    current: str  # the item in hand's file name, or ""
    current_path: str | None
    port: int
    branch: str
    ahead: int | None  # commits on the branch and not on the base branch
    dirty: int | None
    tokens: int | None
    budget: int | None  # the role's token budget for the run, if it has one


def _seconds_since(stamp: str, now: float) -> int | None:
    try:
        return int(now - times.parse(stamp[:19]))  # to the whole second, as ages are shown
    except ValueError:
        return None


def _oldest_age(path: str, now: float) -> int | None:
    # A queued item is written then renamed into new/: its mtime is when it arrived,
    # and reading it costs a stat rather than a parse of every queued file.
    ages = []
    for item in Mailbox(path).items(Box.NEW):
        try:
            ages.append(int(now - Path(item).stat().st_mtime))
        except OSError:
            continue
    return max(ages) if ages else None


def ahead(root: str, base: str, branch: str) -> int | None:
    """How many commits `branch` has that `base` has not; None if git cannot tell."""
    result = command.run(root, "rev-list", "--count", f"{base}..{branch}", "--")
    return int(result.stdout) if result.ok else None


def row(root: str, base: str, role: RoleStatus, now: float) -> Row:
    """The table row of one role's status."""
    agent = role.agent_state
    if agent is not None:
        state, age = agent.state, _seconds_since(agent.since, now)
    else:
        state, age = ("up" if role.alive else role.process.state), None
    current = role.current
    return Row(
        role=role.role,
        state=state,
        state_age=age,
        queued=role.queued,
        oldest_age=_oldest_age(role.path, now),
        current=Path(current.path).name if current else "",
        current_path=current.path if current else None,
        port=role.port,
        branch=role.branch,
        ahead=ahead(root, base, role.branch),
        dirty=role.dirty_files,
        tokens=role.tokens.total if role.tokens else None,
        budget=role.budget,
    )


def spent(row: Row) -> str:
    """The row's tokens as shown: `12,345`, `12,345/50,000` against a budget, `-` unknown."""
    if row.tokens is None:
        return "-"
    return f"{row.tokens:,}" + (f"/{row.budget:,}" if row.budget is not None else "")
