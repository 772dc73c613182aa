"""The table of `swarmforge watch`: its columns, the cells of each role, the line above it."""

from __future__ import annotations

from rich.text import Text

from swarmforge.swarm.status.crosshost import RemoteRole
from swarmforge.swarm.status.hostlines import beat_said
from swarmforge.text import shown
from swarmforge.times import duration
from swarmforge.views.rows import Row, spent
from swarmforge.views.snapshot import Snapshot

COLUMNS = (
    *("role", "state", "for", "queue", "oldest", "current"),
    *("port", "branch", "ahead", "dirty", "tokens"),
)
HOST_COLUMN = "host"  # only with [transport]: after the role


def literal(cell: str) -> Text:
    """A cell as written: no markup read in it (`x[bold]y` stays so), control characters
    escaped."""
    return Text(shown(cell))


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
    held = f"  held mail: {len(snap.held)} (`swarmforge status`)" if snap.held else ""
    if snap.run_id is None:
        return f"No swarm is running in {snap.project}: `swarmforge up` starts one.{held}"
    elsewhere = f" (+{len(snap.cross.roles)} on other hosts)" if snap.cross else ""
    return (
        f"{snap.project}  run {snap.run_id} ({snap.backend}) {snap.state}"
        f"  base {snap.base}  {len(snap.rows)} roles{elsewhere}{held}"
    )
