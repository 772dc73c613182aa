"""Where a run's roles work: worktrees, branches, ports, roles.tsv, and each role's environment."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from swarmforge import filewrite, fsutil, statedir, stateview, times
from swarmforge.config import rolerecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.roster import SwarmConfig
from swarmforge.config.settings import load_settings
from swarmforge.git import intents, names, repo, worktrees
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.layout import LOGS_DIR, REMOTE_TSV, ROLES_TSV
from swarmforge.ports import assign_ports, is_bound, project_identity
from swarmforge.swarm.bootstrap import marks, worktree


def new_run_id() -> str:
    """A fresh run id: sortable by time, unique enough to never clash in one project."""
    return times.compact() + "-" + os.urandom(3).hex()


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
    leased: frozenset[int] = frozenset(),
) -> list[RoleRecord]:
    """Every role's worktree, branch and port, deterministically; nothing is created.

    A branch keeps the port in `kept` (branch to port, from the session record), unless
    another process holds it now; a port held by another process, or `leased` by the
    roles of another host, goes to no role.
    """
    branches = {}
    for role in config.roles:
        branches[role.name] = (
            main_branch(root) if role.in_main_checkout else names.branch_name(run_id, role.worktree)
        )
    ports = assign_ports(
        set(branches.values()),
        project_identity(root),
        kept=kept or {},
        bound=lambda port: port in leased or is_bound(port),
    )
    return [
        RoleRecord(
            name=role.name,
            agent=role.agent,
            worktree=role.worktree,
            mode=role.mode,
            path=role.worktree_path(root),
            branch=branches[role.name],
            port=ports[branches[role.name]],
            env=(env or {}).get(role.name, {}),
        )
        for role in config.roles
    ]


def create_worktrees(
    root: str, roles: list[RoleRecord], run_id: str, progress: Callable[[str], None]
) -> None:
    """Make (or find again) every role's worktree and mailbox, and bootstrap each new one.

    A worktree found again is not bootstrapped again, unless its last bootstrap failed.
    """
    for role in roles:
        made = False
        if role.worktree not in ("master", "none"):
            made = _is_new(root, role)
            worktrees.create(root, role.worktree, role.branch)
        Mailbox(role.path).ensure(
            Box.OUTBOX_TMP, Box.SENT, Box.FAILED, Box.NEW, Box.IN_PROCESS, Box.COMPLETED
        )
        if made or marks.failure(root, role.name) is not None:
            _bootstrap(root, run_id, role, progress)


def _is_new(root: str, role: RoleRecord) -> bool:
    """True if `worktrees.create` will make the role's worktree (a half-made one included)."""
    return not os.path.lexists(role.path) or os.path.lexists(
        intents.intent_path(root, role.worktree)
    )


def _bootstrap(root: str, run_id: str, role: RoleRecord, progress: Callable[[str], None]) -> None:
    """Bootstrap the role's worktree as swarmforge.toml says, and tell how it went."""
    settings = load_settings(root).role_bootstrap(role.name)
    log = log_file(root, role.name)
    if settings.wanted:
        progress(f"bootstrapping {role.name}'s worktree")
    failed = worktree.run(root, role, settings, rolerecord.role_env(root, run_id, role), log)
    if failed is not None:
        progress(f"role {role.name} setup-failed: {failed.reason}; its agent is not started")


def write_roles_tsv(
    root: str, config: SwarmConfig, roles: list[RoleRecord], remote: dict[str, str] | None = None
) -> None:
    """Write `.swarmforge/roles.tsv` for the helpers and the daemon.

    `remote`: the roles of `config` that other hosts run, by host. They are in roles.tsv
    too, so that the helpers here accept them as recipients, with the worktree they
    would have here; remote.tsv, written first, tells the daemon to send them their mail.
    """
    specs = {s.name: s for s in config.roles}
    rows = [r.entry(r.path).row() for r in roles]
    elsewhere = [specs[name] for name in specs if name in (remote or {})]
    rows += [spec.entry(spec.worktree_path(root)).row() for spec in elsewhere]
    fsutil.makedirs(statedir.of(root))
    stateview.ensure(root)  # the main checkout's view of it, `.swarmforge`
    remote_rows = "".join(f"{spec.name}\t{(remote or {})[spec.name]}\n" for spec in elsewhere)
    remote_path = Path(statedir.path(root, REMOTE_TSV))
    if remote_rows:
        filewrite.atomic_write(str(remote_path), remote_rows.encode())
    elif os.path.lexists(remote_path):
        remote_path.unlink()
    filewrite.atomic_write(statedir.path(root, ROLES_TSV), "".join(rows).encode())


def log_file(root: str, name: str) -> str:
    """The log of role (or component) `name` under `.swarmforge/logs/`."""
    logs = Path(statedir.path(root, LOGS_DIR))
    logs.mkdir(parents=True, exist_ok=True)
    return str(logs / f"{name}.log")
