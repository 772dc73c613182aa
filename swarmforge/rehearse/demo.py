"""`swarmforge demo`: a whole swarm on a throw-away project, with no AI agent needed.

Two headless `exec` roles: a coder that adds a function with its test, commits
and hands the commit to QA; and QA, in batch mode, that merges it, runs the
project's tests and hands the result back. The demo starts the swarm, hands
the coder its first task, watches until the work comes back, prints the audit
trail of every handoff, stops the swarm and says where the project is.

It works only in a directory it makes itself or in an empty one: it runs `git init`
and commits there, so it refuses any directory that already holds something.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from swarmforge.config import sessionrecord
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.git import command
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.swarm.session.down import down as swarm_down
from swarmforge.swarm.session.up import up as swarm_up
from swarmforge.waiting import wait_until

TIMEOUT = 90.0
Progress = Callable[[str], None]
# One handoff copy of the audit trail: where it lies, its recipient and its headers.
Row = dict[str, str | None]

CALC = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b\n'
TESTS = (
    "import unittest\n\nimport calc\n\n\nclass CalcTest(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n\n\n"
    'if __name__ == "__main__":\n    unittest.main()\n'
)
CODER = r'''"""The demo's coder: on a task, add `multiply` with its test, commit, hand it to QA."""
import os, subprocess, sys

task = sys.stdin.read()
if "merge_and_process" in task or "QA:" in task:
    print("coder: QA reported back:", task.strip().splitlines()[-1])
    sys.exit(0)
with open("calc.py", "a") as f:
    f.write('\n\ndef multiply(a, b):\n    """The product of a and b."""\n    return a * b\n')
with open("test_calc.py") as f:
    tests = f.read()
tests = tests.replace("\n\n\nif __name__", "\n\n    def test_multiply(self):\n"
                      "        self.assertEqual(calc.multiply(4, 5), 20)\n\n\nif __name__")
with open("test_calc.py", "w") as f:
    f.write(tests)
git = ["git", "-c", "user.name=demo coder", "-c", "user.email=coder@demo.invalid"]
subprocess.run(git + ["add", "calc.py", "test_calc.py"], check=True)
subprocess.run(git + ["commit", "-q", "-m", "Add multiply"], check=True)
commit = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], check=True,
                        capture_output=True, text=True).stdout.strip()
with open(".handoff-draft", "w") as f:
    f.write(f"type: git_handoff\nto: qa\npriority: 40\ntask: add-multiply\ncommit: {commit}\n")
sys.exit(subprocess.run(["swarm_handoff.sh", ".handoff-draft"]).returncode)
'''
QA = r'''"""The demo's QA, in batch mode: merge each commit, run the tests, report back."""
import re, subprocess, sys

batch = sys.stdin.read()
git = ["git", "-c", "user.name=demo qa", "-c", "user.email=qa@demo.invalid"]
for sender, commit in re.findall(r"^merge_and_process (\S+) ([0-9a-f]{10})$", batch, re.M):
    subprocess.run(git + ["merge", "-q", "--no-edit", commit], check=True)
tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], capture_output=True, text=True)
print(tests.stderr)
summary = tests.stderr.strip().splitlines()
verdict = "passed" if tests.returncode == 0 else "FAILED"
head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], capture_output=True,
                      text=True).stdout.strip()
note = f"QA: tests {verdict} at {head} ({summary[-3] if len(summary) > 2 else 'no output'})"
with open(".handoff-draft", "w") as f:
    f.write(f"type: note\nto: coder\npriority: 30\nmessage: {note[:80]}\n")
sent = subprocess.run(["swarm_handoff.sh", ".handoff-draft"]).returncode
sys.exit(tests.returncode or sent)
'''


# Who makes the demo's own commits. git/command.py drops the GIT_* variables that
# locate a repository: a GIT_DIR inherited from a hook or a shell never points them
# at the user's repository.
IDENTITY = ("-c", "user.name=swarmforge demo", "-c", "user.email=demo@swarmforge.invalid")


def _inside_git_dir(path: str) -> bool:
    """Whether `path`, or its nearest existing parent, lies in a .git directory or a bare
    repository, where files the demo wrote would read as git's own."""
    here = path
    while not os.path.isdir(here):
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent
    result = command.run(here, "rev-parse", "--is-inside-git-dir")
    return result.ok and result.stdout.strip() == b"true"


def claim_directory(directory: str | None) -> tuple[str, bool]:
    """Where the demo works, and whether it made that directory itself.

    A new temporary directory when `directory` is None; `directory` made when it is
    missing; an existing one only when it is empty. Anything else (a file, a git
    repository, a directory holding anything) is refused and left untouched.
    """
    if directory is None:
        return os.path.realpath(tempfile.mkdtemp(prefix="swarmforge-demo-")), True
    given = os.path.abspath(directory)
    if _inside_git_dir(given):
        raise SwarmforgeError(
            f"demo --dir {directory}: is inside a git repository's own files; "
            "give a new or empty directory."
        )
    try:
        os.makedirs(given)
        return os.path.realpath(given), True
    except FileExistsError:
        pass  # decided below: only an empty directory will do
    except OSError as exc:
        raise SwarmforgeError(f"demo --dir {directory}: cannot make it ({exc.strerror}).") from None
    if not os.path.isdir(given):
        raise SwarmforgeError(
            f"demo --dir {directory}: is not a directory; give a new or empty directory."
        )
    try:
        held = os.listdir(given)
    except OSError as exc:
        raise SwarmforgeError(f"demo --dir {directory}: cannot read it ({exc.strerror}).") from None
    if held:
        what = "is a git repository" if ".git" in held else "is not empty"
        raise SwarmforgeError(
            f"demo --dir {directory}: {what}; the demo works only in a new or empty directory."
        )
    return os.path.realpath(given), False


def make_project(root: str) -> None:
    """Write the throw-away project: a tiny library, its tests, the two roles, a first commit."""
    files = {
        "calc.py": CALC,
        "test_calc.py": TESTS,
        "demo/coder.py": CODER,
        "demo/qa.py": QA,
        "swarmforge/constitution.prompt": "Keep every change small and tested.\n",
        "swarmforge/swarmforge.conf": (
            "# A demo swarm: two headless roles that run a command per handoff.\n"
            f"window coder exec coder task {sys.executable} demo/coder.py\n"
            f"window qa exec qa batch {sys.executable} demo/qa.py\n"
        ),
    }
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    command.git(root, "init", "-q", "-b", "main")
    command.git(root, "add", ".")
    command.git(root, "commit", "-q", "-m", "A tiny calculator", options=IDENTITY)


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


def _snapshot(path: str) -> tuple[message.Handoff, int] | None:
    """The handoff at `path` and its write time, read through one descriptor; None if it
    is gone (the roles move files while the demo watches) or unreadable."""
    try:
        with open(path, "rb") as f:
            data = f.read()
            order = os.fstat(f.fileno()).st_mtime_ns
        return message.parse(data, path), order
    except (OSError, CorruptFile):
        return None


def settle(record: sessionrecord.SessionRecord, timeout: float = 10.0) -> bool:
    """Wait until no role has anything queued, in process or waiting in its outbox."""
    boxes = (Box.OUTBOX, Box.NEW, Box.IN_PROCESS)
    return wait_until(
        lambda: not any(Mailbox(r.path).received(box) for r in record.roles for box in boxes),
        timeout,
        0.05,
    )


def trail(record: sessionrecord.SessionRecord) -> list[Row]:
    """Every handoff copy in every role's inbox, with its headers and where it lies."""
    found_rows: list[tuple[Row, int]] = []
    for role in record.roles:
        box = Mailbox(role.path)
        for state, directory in (
            ("queued", Box.NEW),
            ("in process", Box.IN_PROCESS),
            ("completed", Box.COMPLETED),
        ):
            for path in box.received(directory):
                found = _snapshot(path)
                if found is None:
                    continue  # moved on between the listing and the read; seen next pass
                h, order = found
                fields = (
                    "from",
                    "to",
                    "priority",
                    "type",
                    "task",
                    "message",
                    "commit",
                    "created_at",
                    "enqueued_at",
                    "dequeued_at",
                    "completed_at",
                    "outcome",
                )
                row: Row = {"file": path, "state": state, "recipient": role.name}
                row.update((k, h.get(k)) for k in fields)
                found_rows.append((row, order))
    # Header times have one-second resolution; within a second, the order the copies
    # were last written in (completed last) breaks the tie.
    found_rows.sort(key=lambda r: (str(r[0]["created_at"]), r[1]))
    return [row for row, _ in found_rows]


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


@dataclass(frozen=True)
class RoleSummary:
    """What one role of the demo did."""

    role: str
    branch: str
    port: int
    received: int
    completed: int
    failed: int
    sent: int
    commits: int


@dataclass(frozen=True)
class DemoReport:
    """What the demo did: the verdict, where, the audit trail and each role's share."""

    ok: bool
    project: str
    made_directory: bool
    run_id: str
    handoffs: list[Row]
    roles: list[RoleSummary]

    def as_json(self) -> dict[str, object]:
        return asdict(self)


def summary(root: str, record: sessionrecord.SessionRecord, rows: list[Row]) -> list[RoleSummary]:
    """Per role: handoffs received, completed, failed, sent, and commits on its branch."""
    out = []
    for role in record.roles:
        mine = [r for r in rows if r["recipient"] == role.name]
        commits = command.git(root, "rev-list", "--count", f"main..{role.branch}").strip()
        out.append(
            RoleSummary(
                role=role.name,
                branch=role.branch,
                port=role.port,
                received=len(mine),
                completed=sum(r["state"] == "completed" for r in mine),
                failed=sum(r["outcome"] == "failed" for r in mine),
                sent=sum(r["from"] == role.name for r in rows),
                commits=int(commits),
            )
        )
    return out


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
