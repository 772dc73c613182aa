"""Token budgets: what a role, or the whole swarm, may spend in one run, reported once crossed.

swarmforge.toml sets them (`[budget] tokens` for the swarm, `[roles.<name>.budget]
tokens` per role; settings.py). The delivery daemon calls `Tracker.poll` on every pass
of its loop; at most every `CHECK_SECONDS`, while the session record says the swarm is
running, `check` adds up what each role's agent spent since the run started (from the
agents' own session files, tokens.py, which reads only what they appended since the
last check) and writes one `budget-crossed` event for each budget reached: a role's,
or every role's together against the swarm's. `[notify]` turns that event into a
notification like any other.

Each budget is reported once per run, across daemon restarts too: the scopes already
reported are kept in `.swarmforge/daemon/budget.json` with the run's id. A crossing is
written there before its event, so a daemon killed between the two loses that event
rather than repeating it, and one whose record cannot be written reports nothing
(instead of the same crossing every check). The check runs beside delivery, in a
thread of its own: however long the session files take to read, and whatever goes
wrong (named in the daemon's log), delivery never waits for it or fails with it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from swarmforge import events, filewrite, fsutil, times
from swarmforge.agents.registry import agent
from swarmforge.agents.tokens import Tokens
from swarmforge.config import rolerecord, sessionrecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.config.settings import Settings, load_settings
from swarmforge.errors import SwarmforgeError
from swarmforge.layout import BUDGET_STATE

CHECK_SECONDS = 30.0  # how often the daemon checks the budgets of a running swarm
KIND = "budget-crossed"
SWARM = "swarm"  # the scope of the whole swarm's budget; a role's is "role:<name>"

Log = Callable[[str], None]


@dataclass(frozen=True)
class Limits:
    """The budgets swarmforge.toml sets: the swarm's, and each role's that has one."""

    swarm: int | None = None
    roles: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        """The budgets of `settings`."""
        roles = {name: s.budget.tokens for name, s in settings.roles.items()}
        return cls(settings.budget.tokens, {n: t for n, t in roles.items() if t is not None})

    def role(self, name: str) -> int | None:
        """Role `name`'s budget, or None."""
        return self.roles.get(name)


def limits(root: str) -> Limits:
    """The budgets of the project at `root`; CorruptFile if swarmforge.toml is broken."""
    return Limits.of(load_settings(root))


def run_since(record: SessionRecord) -> float | None:
    """When the run started, as a Unix time; None if its record does not say clearly."""
    try:
        return times.parse(record.started_at)
    except ValueError:
        return None


def role_spent(root: str, record: SessionRecord, role: RoleRecord) -> Tokens | None:
    """What the role's agent spent since the run started, from its own session files, as
    `status` shows it and budgets count it; None when that cannot be known."""
    since = run_since(record)
    if since is None:
        return None
    env = rolerecord.role_env(root, record.run_id, role)
    return agent(role.agent).tokens(env, role.path, since)


def check(root: str, log: Log) -> list[dict[str, object]]:
    """Report each budget the running swarm has reached and that was not reported yet in
    this run: the fields of the `budget-crossed` events written."""
    budgets = limits(root)
    if budgets.swarm is None and not budgets.roles:
        return []
    record = sessionrecord.load(root)
    if record is None or record.state != "running":
        return []
    path = os.path.join(root, BUDGET_STATE)
    reported = _reported(path, record.run_id, log)
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
    _remember(path, record.run_id, sorted(reported | set(scopes)))
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


def _reported(path: str, run_id: str, log: Log) -> set[str]:
    """The scopes already reported in run `run_id`; none when the file is of another run.

    A damaged file is said in the log and read as none: a crossing reported twice is
    better than budgets silently never reported again.
    """
    try:
        data = json.loads(fsutil.read_regular(path, limit=1 << 20))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError) as exc:
        log(f"budget record {path} unreadable, starting afresh: {exc}")
        return set()
    if not isinstance(data, dict) or data.get("run") != run_id:
        return set()
    scopes = data.get("reported")
    return {s for s in scopes if isinstance(s, str)} if isinstance(scopes, list) else set()


def _remember(path: str, run_id: str, scopes: list[str]) -> None:
    """Record that `scopes` were reported in run `run_id` (before their events are written)."""
    fsutil.makedirs(os.path.dirname(path))
    text = json.dumps({"run": run_id, "reported": scopes}, indent=2) + "\n"
    filewrite.atomic_write(path, text.encode())


class Tracker:
    """The daemon's budget check: at most every `every` seconds, in a background thread."""

    def __init__(self, root: str, log: logging.Logger, every: float = CHECK_SECONDS) -> None:
        self.root = root
        self.log = log
        self.every = every
        self._due = 0.0  # the first pass checks at once
        self._thread: threading.Thread | None = None
        self._said = ""  # the last problem logged: a lasting one is logged once

    def poll(self) -> None:
        """Start a check if one is due and none is under way; never raises, never waits."""
        try:
            now = time.monotonic()
            if now < self._due or (self._thread is not None and self._thread.is_alive()):
                return
            self._due = now + self.every
            self._thread = threading.Thread(target=self._check, name="budget-check", daemon=True)
            self._thread.start()
        except Exception:
            self.log.exception("budget check not started")

    def wait(self, timeout: float = 5.0) -> None:
        """Let a check under way finish (the daemon does, before it exits)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def _check(self) -> None:
        try:
            check(self.root, lambda line: self.log.warning("%s", line))
        except SwarmforgeError as exc:
            self._problem(exc.message)
        except OSError as exc:
            self._problem(str(exc))
        except Exception:
            self.log.exception("budget check failed")
        else:
            self._said = ""

    def _problem(self, text: str) -> None:
        """Log a problem, unless it is the one the last check logged (a broken settings
        file would otherwise fill the log every `every` seconds)."""
        if text != self._said:
            self.log.warning("budget check: %s", text)
        self._said = text
