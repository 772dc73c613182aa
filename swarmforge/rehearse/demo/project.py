"""The demo's throw-away project: a tiny library and its tests, the coder's and QA's
programs, the swarm configuration that runs them, and a first commit."""

from __future__ import annotations

import sys
from pathlib import Path

from swarmforge.git import command

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
        path = Path(root, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    command.git(root, "init", "-q", "-b", "main")
    command.git(root, "add", ".")
    command.git(root, "commit", "-q", "-m", "A tiny calculator", options=IDENTITY)
