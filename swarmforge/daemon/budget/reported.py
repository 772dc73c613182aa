"""The budgets already reported in a run, kept in `.swarmforge/daemon/budget.json`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from swarmforge import filewrite, fsutil

Log = Callable[[str], None]


def already_reported(path: Path, run_id: str, log: Log) -> set[str]:
    """The scopes already reported in run `run_id`; none when the file is of another run.

    A damaged file is said in the log and read as none: a crossing reported twice is
    better than budgets silently never reported again.
    """
    try:
        data = json.loads(fsutil.read_regular(str(path), limit=1 << 20))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError) as exc:
        log(f"budget record {path} unreadable, starting afresh: {exc}")
        return set()
    if not isinstance(data, dict) or data.get("run") != run_id:
        return set()
    scopes = data.get("reported")
    return {s for s in scopes if isinstance(s, str)} if isinstance(scopes, list) else set()


def remember(path: Path, run_id: str, scopes: list[str]) -> None:
    """Record that `scopes` were reported in run `run_id` (before their events are written)."""
    fsutil.makedirs(str(path.parent))
    text = json.dumps({"run": run_id, "reported": scopes}, indent=2) + "\n"
    filewrite.atomic_write(str(path), text.encode())
