"""What the cockpit's page is sent as its state: the swarm's rows and hosts, the events,
and what tells that the planned runs changed."""

from __future__ import annotations

import shlex
from dataclasses import asdict
from pathlib import Path

from swarmforge.eventline import line
from swarmforge.run import overview
from swarmforge.swarm.status.hostlines import elsewhere
from swarmforge.views.attach import attach_command
from swarmforge.views.rows import spent
from swarmforge.views.snapshot import Snapshot


def swarm_state(root: str, snap: Snapshot | str) -> dict[str, object]:
    """The swarm part of the page's state."""
    if isinstance(snap, str):
        return {"problem": snap, "rows": []}
    rows: list[dict[str, object]] = [
        {
            **asdict(row),
            "spent": spent(row),
            "attach": shlex.join(attach_command(root, row.role)),
        }
        for row in snap.rows
    ]
    shown: dict[str, object] = {
        "project": snap.project,
        "state": snap.state,
        "run_id": snap.run_id,
        "backend": snap.backend,
        "base": snap.base,
        "rows": rows,
        "held": list(snap.held),
    }
    cross = snap.cross
    if cross is not None:
        for row in rows:
            row["host"] = cross.this_host
        remote = [
            {**role.as_json(), "spent": "-", "elsewhere": elsewhere(role)} for role in cross.roles
        ]
        shown |= {
            "rows": rows + remote,
            "hosts": [host.as_json() for host in cross.hosts],
            "transport_error": cross.error,
        }
    return shown


def shown_event(event: dict[str, object]) -> dict[str, object]:
    """An event as the page shows it: its kind, time and one line of text."""
    return {"ts": event.get("ts"), "kind": event.get("kind"), "line": line(event)}


def runs_stamp(root: str) -> tuple[tuple[str, int, int], ...]:
    """Size and time of every run's journal and park ledgers: what a change moves."""
    found = []
    for run_dir in overview.run_dirs(root):
        for path in sorted(Path(run_dir).iterdir()):
            if path.name.endswith((".jsonl", ".json")):
                try:
                    st = path.stat()
                except OSError:
                    continue
                found.append((str(path), st.st_size, st.st_mtime_ns))
    return tuple(found)
