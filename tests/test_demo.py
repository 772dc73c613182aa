"""`swarmforge demo` end to end, its audit trail checked against the mailbox files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from swarmforge.handoff import message
from swarmforge.swarm import procs
from tests.support import VENV_BIN, git


def test_the_demo_runs_a_swarm_and_its_audit_trail_matches_the_mailboxes(tmp_path: Path) -> None:
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(tmp_path)}
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    where = tmp_path / "demo"
    r = subprocess.run(
        [os.path.join(VENV_BIN, "swarmforge"), "demo", "--json", "--dir", str(where)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["ok"] is True and report["project"] == str(where)
    assert "handing the coder its first task" in r.stderr  # progress, while it ran
    rows = report["handoffs"]
    assert [(h["from"], h["recipient"]) for h in rows] == [
        ("demo", "coder"),
        ("coder", "qa"),
        ("qa", "coder"),
    ]
    for row in rows:
        on_disk = message.read(row["file"])
        for field in (
            "from",
            "to",
            "priority",
            "created_at",
            "enqueued_at",
            "dequeued_at",
            "completed_at",
        ):
            assert on_disk.get(field) == row[field], (row["file"], field)
        assert row["state"] == "completed" and "/inbox/completed/" in row["file"]
    qa_copy = rows[1]
    assert "/batch_" in qa_copy["file"], "qa works in batch mode"
    assert qa_copy["commit"] == git(
        where / ".worktrees" / "coder", "rev-parse", "--short=10", "HEAD"
    )
    assert "tests passed" in rows[2]["message"]
    roles = {r["role"]: r for r in report["roles"]}
    assert roles["coder"]["received"] == 2 and roles["coder"]["sent"] == 1
    assert roles["qa"]["completed"] == 1 and roles["qa"]["commits"] == 1
    assert procs.tagged(str(where)) == [], "the swarm was stopped"
    text = subprocess.run(
        [os.path.join(VENV_BIN, "swarmforge"), "demo", "--dir", str(where)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert text.returncode == 1 and "already holds a swarmforge/ directory" in text.stderr
