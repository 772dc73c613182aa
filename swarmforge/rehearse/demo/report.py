"""What the demo reports: the verdict, where the project is, the audit trail, and each
role's share of the work."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from swarmforge.config import sessionrecord
from swarmforge.git import command
from swarmforge.rehearse.demo.trail import Row


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
