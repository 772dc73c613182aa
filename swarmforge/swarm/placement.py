"""Where a run's roles work: worktrees, branches, ports, roles.tsv, and each role's environment."""

from __future__ import annotations

import os
import time

from swarmforge import fsutil, proc, roletable
from swarmforge.git import names, repo, worktrees
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.layout import BIN_DIR, LOGS_DIR, ROLES_TSV
from swarmforge.ports import assign_ports, is_bound, project_identity
from swarmforge.swarm import tagging
from swarmforge.swarm.roster import RoleSpec, SwarmConfig
from swarmforge.swarm.runrecord import RoleRecord


def new_run_id() -> str:
    """A fresh run id: sortable by time, unique enough to never clash in one project."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + os.urandom(3).hex()


def main_branch(root: str) -> str:
    """The branch checked out in the main checkout (its port names the main-checkout roles)."""
    checkout = repo.open_checkout(root)
    ref = checkout.head_ref if checkout else None
    return ref.removeprefix("refs/heads/") if ref else "HEAD"


def plan(
    root: str,
    config: SwarmConfig,
    run_id: str,
    env: dict[str, dict[str, str]] | None = None,
    kept: dict[str, int] | None = None,
) -> list[RoleRecord]:
    """Every role's worktree, branch and port, deterministically; nothing is created.

    A branch keeps the port in `kept` (branch to port, from the run record), unless
    another process holds it now; a port held by another process goes to no role.
    """
    branches = {}
    for role in config.roles:
        branches[role.name] = (
            main_branch(root) if role.in_main_checkout else names.branch_name(run_id, role.worktree)
        )
    ports = assign_ports(
        set(branches.values()), project_identity(root), kept=kept or {}, bound=is_bound
    )
    return [
        RoleRecord(
            name=role.name,
            agent=role.agent,
            worktree=role.worktree,
            path=role.worktree_path(root),
            branch=branches[role.name],
            port=ports[branches[role.name]],
            mode=role.mode,
            session=role.session_name,
            exec_role=role.is_exec,
            env=(env or {}).get(role.name, {}),
        )
        for role in config.roles
    ]


def create_worktrees(root: str, roles: list[RoleRecord]) -> None:
    """Make (or find again) every role's worktree and mailbox."""
    for role in roles:
        if role.worktree not in ("master", "none"):
            worktrees.create(root, role.worktree, role.branch)
        Mailbox(role.path).ensure(
            Box.OUTBOX_TMP, Box.SENT, Box.FAILED, Box.NEW, Box.IN_PROCESS, Box.COMPLETED
        )


def write_roles_tsv(root: str, config: SwarmConfig, roles: list[RoleRecord]) -> None:
    """Write `.swarmforge/roles.tsv` for the helpers and the daemon."""
    specs = {s.name: s for s in config.roles}
    rows = [
        roletable.RoleEntry(
            [r.name, r.worktree, r.path, r.session, _display(specs[r.name]), r.agent, r.mode]
        ).row()
        for r in roles
    ]
    path = os.path.join(root, ROLES_TSV)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fsutil.atomic_write(path, "".join(rows).encode())


def _display(spec: RoleSpec) -> str:
    # roles.tsv is tab-separated: a display name never holds a tab.
    return spec.display_name.replace("\t", " ")


def role_vars(root: str, run_id: str, role: RoleRecord) -> dict[str, str]:
    """The variables that set `role`'s processes apart: run tags, role, port, helpers on PATH."""
    path = role.env.get("PATH") or os.environ.get("PATH", "/usr/bin:/bin")
    return {
        **role.env,
        **tagging.tags(run_id, root),
        "SWARMFORGE_ROLE": role.name,
        "PORT": str(role.port),
        "SWARMFORGE_PORT": str(role.port),
        "PATH": os.path.join(root, BIN_DIR) + os.pathsep + path,
    }


def role_env(root: str, run_id: str, role: RoleRecord) -> dict[str, str]:
    """The whole environment of everything started for `role`."""
    return proc.child_env(role_vars(root, run_id, role))


def log_file(root: str, name: str) -> str:
    """The log of role (or component) `name` under `.swarmforge/logs/`."""
    os.makedirs(os.path.join(root, LOGS_DIR), exist_ok=True)
    return os.path.join(root, LOGS_DIR, f"{name}.log")
