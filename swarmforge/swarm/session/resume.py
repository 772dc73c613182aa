"""The run an `up` starts or resumes: its id, and where each role works, keeping recorded ports."""

from __future__ import annotations

from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.roster import SwarmConfig
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.git import names, worktrees
from swarmforge.ports import port_for, project_identity
from swarmforge.swarm import placement, rolecommand
from swarmforge.swarm.session.progress import Progress


def plan(
    root: str,
    config: SwarmConfig,
    previous: SessionRecord | None,
    role_env: dict[str, dict[str, str]],
    leased: frozenset[int],
    progress: Progress,
) -> tuple[str, list[RoleRecord]]:
    """The run id (the recorded run's, when there is one) and where each role will work."""
    unrecorded = None if previous else _unrecorded_run(root, config)
    run_id = previous.run_id if previous else unrecorded or placement.new_run_id()
    progress(f"{'resuming' if previous or unrecorded else 'starting'} run {run_id}")
    recorded = _recorded_ports(previous)
    planned = placement.plan(root, config, run_id, role_env, recorded, leased)
    _say_moved_ports(root, planned, recorded, progress)
    rolecommand.check_instructions(root, planned)
    return run_id, planned


def _recorded_ports(record: SessionRecord | None) -> dict[str, int]:
    """Each branch's port as the session record keeps it: a resumed role keeps its port."""
    return {role.branch: role.port for role in record.roles} if record else {}


def _say_moved_ports(
    root: str, planned: list[RoleRecord], recorded: dict[str, int], progress: Progress
) -> None:
    """Name every role given a port other than its home port or its recorded one, and why."""
    project = project_identity(root)
    for role in planned:
        home = port_for(role.branch, project)
        if role.port not in (home, recorded.get(role.branch)):
            progress(
                f"role {role.name} gets port {role.port}: "
                f"port {recorded.get(role.branch, home)} is another role's or in use"
            )


def _unrecorded_run(root: str, config: SwarmConfig) -> str | None:
    """The run whose role worktrees an `up` made before it recorded the run, if they agree.

    Only an `up` from before runs were recorded first can have left such worktrees.
    """
    wanted = {role.worktree for role in config.roles if not role.in_main_checkout}
    found = set()
    for tree in worktrees.list_worktrees(root):
        parts = (tree.branch or "").split("/")
        if (
            tree.name in wanted
            and len(parts) == 3
            and parts[0::2] == [names.BRANCH_PREFIX, tree.name]
        ):
            found.add(parts[1])
    return found.pop() if len(found) == 1 else None
