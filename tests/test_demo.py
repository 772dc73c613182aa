"""`swarmforge demo` end to end, its audit trail checked against the mailbox files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from swarmforge import tagging
from swarmforge.cli.demo_cmd import farewell
from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import message
from swarmforge.rehearse.demo.directory import claim_directory
from tests.support import SWARMFORGE, VENV_BIN, copy_tree, git, run_cli


def snapshot(path: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under `path` (or `path` itself, a file): its mode and its bytes."""
    if not path.is_dir():
        return {"": (path.lstat().st_mode, path.read_bytes())}
    entries = {"": (path.lstat().st_mode, b"")}
    for entry in sorted(path.rglob("*")):
        data = entry.read_bytes() if entry.is_file() and not entry.is_symlink() else b""
        if entry.is_symlink():
            data = str(entry.readlink()).encode()
        entries[str(entry.relative_to(path))] = (entry.lstat().st_mode, data)
    return entries


def test_the_demo_runs_a_swarm_and_its_audit_trail_matches_the_mailboxes(
    tmp_path: Path, template_repo: Path
) -> None:
    # A GIT_DIR inherited from the caller's shell must not lead the demo into that repository.
    bystander = copy_tree(template_repo, tmp_path / "bystander")
    before = snapshot(bystander)
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(tmp_path)}
    env["GIT_DIR"] = str(bystander / ".git")
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    where = tmp_path / "demo"
    where.mkdir()  # an empty directory of the user's is accepted
    r = subprocess.run(
        [SWARMFORGE, "demo", "--json", "--dir", str(where)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["ok"] is True and report["project"] == str(where)
    assert report["made_directory"] is False
    assert snapshot(bystander) == before
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
    assert tagging.tagged(str(where)) == [], "the swarm was stopped"
    left = snapshot(where)
    again = run_cli("demo", "--dir", str(where), cwd=tmp_path)
    assert (again.returncode, again.stderr) == (
        1,
        f"demo --dir {where}: is a git repository; "
        "the demo works only in a new or empty directory.\n",
    )
    assert snapshot(where) == left


@pytest.mark.parametrize("kind", ["file", "non-empty", "repository", "git's own", "under .git"])
def test_the_demo_refuses_any_directory_that_holds_something(
    kind: str, tmp_path: Path, repo: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    target, guarded = {
        "file": (mine / "notes.txt", mine),
        "non-empty": (mine, mine),
        "repository": (repo, repo),
        "git's own": (repo / ".git" / "refs" / "tags", repo),  # empty, but git's
        "under .git": (repo / ".git" / "demo", repo),  # missing, and would be git's
    }[kind]
    before = snapshot(guarded)
    r = run_cli("demo", "--dir", str(target), cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(f"demo --dir {target}: ")
    assert "new or empty directory" in r.stderr
    assert snapshot(guarded) == before


def test_the_demo_makes_a_missing_directory_and_says_it_made_it(tmp_path: Path) -> None:
    where, made = claim_directory(str(tmp_path / "a" / "b"))
    assert (where, made) == (str(tmp_path / "a" / "b"), True) and list(Path(where).iterdir()) == []
    empty = tmp_path / "empty"
    empty.mkdir()
    assert claim_directory(str(empty)) == (str(empty), False)
    with pytest.raises(SwarmforgeError, match="is not empty"):
        claim_directory(str(tmp_path))


def test_the_closing_advice_removes_only_what_the_demo_made() -> None:
    made = farewell("/tmp/swarmforge-demo-x", made=True)
    assert made.endswith("Remove it with: rm -rf /tmp/swarmforge-demo-x")
    given = farewell("/home/me/my demo", made=False)
    assert "rm -rf" not in given
    assert given.endswith("empty it again with: find '/home/me/my demo' -mindepth 1 -delete")
