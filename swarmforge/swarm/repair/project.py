"""`repair` of a project: every role's mailbox, and `--older-than` read."""

from __future__ import annotations

import os
import time

from swarmforge.errors import SwarmforgeError
from swarmforge.swarm.capturing import capture_roles
from swarmforge.swarm.repair.fixer import Fixer
from swarmforge.swarm.repair.holders import holders
from swarmforge.swarm.repair.report import Repair, RepairReport


def age_limit(text: str | None) -> float | None:
    """`--older-than` in seconds (None when not given); one clear error for a bad value."""
    if text is None:
        return None
    from swarmforge.config.fields import duration_seconds

    try:
        return duration_seconds(text)
    except ValueError as exc:
        raise SwarmforgeError(f"--older-than: {exc}.") from None


def repair(root: str, *, dry_run: bool = False, older_than: str | None = None) -> RepairReport:
    """Find the stuck work of every role of the project at `root` and return it to its queue.

    With `dry_run`, report what would be done and change nothing.
    """
    limit = age_limit(older_than)
    root = os.path.realpath(root)
    now = time.time()
    found: list[Repair] = []
    # Before any work is moved back to a queue; one that fails is told, never stopping it.
    failed = [] if dry_run else capture_roles(root, "repair")
    for holder in holders(root):
        fixer = Fixer(root, holder, dry_run)
        found += fixer.mailbox(limit, older_than or "", now)
    return RepairReport(root, dry_run, older_than, found, failed)
