"""The demo played through: the swarm started, the coder handed its first task, the
handoffs followed until QA's report is back, the swarm stopped and the report made."""

from __future__ import annotations

import time
from collections.abc import Callable

from swarmforge.config import sessionrecord
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.rehearse.demo.directory import claim_directory
from swarmforge.rehearse.demo.project import make_project
from swarmforge.rehearse.demo.report import DemoReport, summary
from swarmforge.rehearse.demo.trail import trail
from swarmforge.swarm.session.down import down as swarm_down
from swarmforge.swarm.session.up import up as swarm_up
from swarmforge.waiting import wait_until

TIMEOUT = 90.0
Progress = Callable[[str], None]


def kick_off(record: sessionrecord.SessionRecord) -> str:
    """Hand the coder its first task, as a person would (delivered straight to its inbox)."""
    from swarmforge import times
    from swarmforge.handoff import copies

    coder = record.role("coder")
    assert coder is not None
    stamp = times.compact()
    name = f"50_{stamp}_000001_from_demo_to_coder.handoff"
    handoff = message.Handoff(
        [
            ("id", f"{stamp}_000001_from_demo"),
            ("from", "demo"),
            ("to", "coder"),
            ("priority", "50"),
            ("type", "note"),
            ("message", "Add multiply(a, b) with a test."),
            ("created_at", times.stamp()),
        ],
        "Re-read your role and constitution.\n\nAdd multiply(a, b) with a test.\n",
    )
    copies.copy_to(handoff, name, "coder", coder.entry(coder.path))
    return name


def settle(record: sessionrecord.SessionRecord, timeout: float = 10.0) -> bool:
    """Wait until no role has anything queued, in process or waiting in its outbox."""
    boxes = (Box.OUTBOX, Box.NEW, Box.IN_PROCESS)
    return wait_until(
        lambda: not any(Mailbox(r.path).received(box) for r in record.roles for box in boxes),
        timeout,
        0.05,
    )


def watch(
    record: sessionrecord.SessionRecord, progress: Progress, timeout: float = TIMEOUT
) -> bool:
    """Follow the handoffs until QA's report is back with the coder; False on failure."""
    seen: set[tuple[str, str]] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = trail(record)
        for row in rows:
            key = (str(row["file"]).rsplit("/", 1)[-1] + str(row["recipient"]), str(row["state"]))
            if key not in seen:
                seen.add(key)
                what = row["message"] or f"commit {row['commit']} ({row['task']})"
                progress(f"  {row['from']} -> {row['recipient']}: {row['state']:10s} {what}")
        if any(r["outcome"] == "failed" for r in rows):
            return False
        back = [
            r
            for r in rows
            if r["recipient"] == "coder" and r["from"] == "qa" and r["state"] == "completed"
        ]
        if back:
            return "passed" in str(back[0]["message"])
        time.sleep(0.1)
    progress(f"  gave up after {timeout:.0f} s")
    return False


def run_demo(directory: str | None = None, progress: Progress = print) -> DemoReport:
    """Run the demo; a report of what happened (`ok` False if any step failed)."""
    root, made = claim_directory(directory)
    progress(f"making a throw-away project in {root}")
    make_project(root)
    progress("starting a headless swarm: coder (task mode) and qa (batch mode)")
    record, _ = swarm_up(root, "headless", progress=lambda m: progress(f"  {m}"))
    ok = False
    try:
        progress("handing the coder its first task")
        kick_off(record)
        ok = watch(record, progress)
        if ok and not settle(record):
            progress("  a role still had work in hand after QA reported back")
            ok = False
    finally:
        progress("stopping the swarm")
        swarm_down(root, progress=lambda m: progress(f"  {m}"))
    # Taken once the swarm is stopped, so the trail is what the mailboxes hold for good.
    rows = trail(record)
    return DemoReport(ok, root, made, record.run_id, rows, summary(root, record, rows))
