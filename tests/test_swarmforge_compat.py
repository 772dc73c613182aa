"""A round trip written the way SwarmForge agents and scripts use the helpers, by name on PATH."""

from __future__ import annotations

import subprocess

from swarmforge.handoff.mailbox import Box
from tests.support import BIN, VENV_BIN, Project

SENDER = r"""
set -eu
git add -A >/dev/null && git -c user.name=a -c user.email=a@a commit -qm "feature" >/dev/null
printf 'type: git_handoff\nto: qa\npriority: 30\ntask: feature-1\ncommit: %s\n' \
    "$(git rev-parse --short=10 HEAD)" > .swarmforge-draft
swarm_handoff.sh .swarmforge-draft
"""

RECEIVER = r"""
set -eu
out=$(ready_for_next.sh)
printf '%s\n' "$out" | sed -n 's/^TASK: //p' > taken
printf '%s\n' "$out" | grep -q '^merge_and_process coder [0-9a-f]\{10\}$'
done_with_current.sh
"""


def test_sender_and_batch_receiver_scripts(project: Project) -> None:
    env = {
        "PATH": f"{BIN}:{VENV_BIN}:/usr/bin:/bin",
        "SWARMFORGE_ROLE": "coder",
        "HOME": "/nonexistent",
    }
    (project.tree("coder") / "feature.txt").write_text("feature\n")
    sent = subprocess.run(
        ["sh", "-c", SENDER], cwd=project.tree("coder"), env=env, capture_output=True, text=True
    )
    assert sent.returncode == 0, sent.stderr
    queued = sent.stdout.strip().removeprefix("HANDOFF QUEUED: ")
    project.deliver(queued)
    env["SWARMFORGE_ROLE"] = "qa"
    got = subprocess.run(
        ["sh", "-c", RECEIVER], cwd=project.tree("qa"), env=env, capture_output=True, text=True
    )
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0].startswith("COMPLETED: ") and lines[1].startswith("COMPLETED_BATCH: ")
    assert lines[2] == "NO_TASK"
    taken = (project.tree("qa") / "taken").read_text().strip()
    assert taken.endswith("_from_coder_to_qa.handoff")
    assert project.names("qa", Box.COMPLETED)[0].startswith("batch_")
