"""A role's facts in one model, and the formats on disk made from it: its row of
roles.tsv, and its place in the session record (run.json)."""

from __future__ import annotations

from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.roletable import parse_roles

# A session record as swarmforge wrote it before a placed role was a `Role` with more.
RUN_JSON = """\
{
  "run_id": "r1",
  "project": "/p",
  "backend": "headless",
  "state": "running",
  "started_at": "2024-01-01T00:00:00Z",
  "runner_pid": null,
  "inhibitor_pid": null,
  "roles": [
    {
      "name": "tests",
      "agent": "exec",
      "worktree": "tests",
      "path": "/p/.worktrees/tests",
      "branch": "swarm/r1/tests",
      "port": 4321,
      "mode": "batch",
      "session": "swarmforge-tests",
      "exec_role": true,
      "pid": 77,
      "env": {
        "A": "1"
      }
    }
  ],
  "host": null,
  "remote": {}
}
"""


def test_a_session_record_reads_and_writes_run_json_as_it_always_was() -> None:
    record = SessionRecord.model_validate_json(RUN_JSON)
    role = record.roles[0]
    assert (role.session_name, role.is_exec, role.pid) == ("swarmforge-tests", True, 77)
    assert record.model_dump_json(indent=2) + "\n" == RUN_JSON


def test_a_role_row_of_roles_tsv_is_made_from_the_role() -> None:
    role = RoleRecord(
        name="code-reviewer", agent="claude", worktree="rev", path="/p/rev", branch="b", port=1
    )
    row = role.entry(role.path).row()
    assert (
        row == "code-reviewer\trev\t/p/rev\tswarmforge-code-reviewer\tCode Reviewer\tclaude\ttask\n"
    )
    assert parse_roles(row, "roles.tsv")["code-reviewer"].row() == row
