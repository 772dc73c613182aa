"""Checking the budgets of a running swarm: a `budget-crossed` event for each one reached."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from swarmforge import events, statedir
from swarmforge.config import sessionrecord
from swarmforge.daemon.budget.limits import Limits, limits
from swarmforge.daemon.budget.reported import Log, already_reported, remember
from swarmforge.daemon.budget.spent import role_spent
from swarmforge.layout import BUDGET_STATE

KIND = "budget-crossed"
SWARM = "swarm"  # the scope of the whole swarm's budget; a role's is "role:<name>"


def check(root: str, log: Log) -> list[dict[str, object]]:
    """Report each budget the running swarm has reached and that was not reported yet in
    this run: the fields of the `budget-crossed` events written."""
    budgets = limits(root)
    if budgets.swarm is None and not budgets.roles:
        return []
    record = sessionrecord.load(root)
    if record is None or record.state != "running":
        return []
    path = Path(statedir.path(root, BUDGET_STATE))
    reported = already_reported(path, record.run_id, log)
    swarm_due = budgets.swarm is not None and SWARM not in reported
    roles_due = {n for n in budgets.roles if _role_scope(n) not in reported}
    if not swarm_due and not roles_due:
        return []  # nothing left to report in this run: nothing is read
    spent: dict[str, int] = {}
    for role in record.roles:
        if swarm_due or role.name in roles_due:
            tokens = role_spent(root, record, role)
            spent[role.name] = tokens.total if tokens is not None else 0
    crossed = _crossed(budgets, spent, roles_due, swarm_due, record.run_id)
    if not crossed:
        return []
    scopes = [SWARM if c["scope"] == SWARM else _role_scope(str(c["role"])) for c in crossed]
    remember(path, record.run_id, sorted(reported | set(scopes)))
    events.EventLog(root, on_error=lambda exc: log(f"budget-crossed not logged: {exc}")).emit_many(
        (KIND, fields) for fields in crossed
    )
    return crossed


def _crossed(
    budgets: Limits, spent: Mapping[str, int], roles_due: set[str], swarm_due: bool, run: str
) -> list[dict[str, object]]:
    """The fields of an event for each due budget that `spent` reaches: roles, then the swarm."""
    crossed: list[dict[str, object]] = []
    for name in sorted(roles_due):
        budget = budgets.roles[name]
        if name in spent and spent[name] >= budget:
            crossed.append(
                {
                    "scope": "role",
                    "role": name,
                    "tokens": spent[name],
                    "budget": budget,
                    "run_id": run,
                }
            )
    total = sum(spent.values())
    if swarm_due and budgets.swarm is not None and total >= budgets.swarm:
        crossed.append({"scope": SWARM, "tokens": total, "budget": budgets.swarm, "run_id": run})
    return crossed


def _role_scope(name: str) -> str:
    return f"role:{name}"
