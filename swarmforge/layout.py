"""Where swarmforge keeps its state on disk: the one place that spells these paths.

Every path is relative to a project's top directory (the main checkout), except the
mailbox (`HANDOFFS`), which each role's worktree has. Each `.swarmforge/...` path is
as a checkout shows it; where it really lies, in the common git directory, is
`statedir.path(root, PATH)` (statedir.py). Both top directories are git-ignored through
the repository's `info/exclude`, never committed.
"""

from __future__ import annotations

import os

SWARMFORGE_DIR = "swarmforge"  # what the user writes: the roster, prompts and settings
CONFIG_FILE = os.path.join(SWARMFORGE_DIR, "swarmforge.conf")  # the roster

STATE_DIR = ".swarmforge"  # swarmforge's own state: mailboxes, session record, logs, locks
WORKTREES_DIR = ".worktrees"  # the roles' worktrees, one directory per role or task
STATE_DIRS = (STATE_DIR, WORKTREES_DIR)
DRAFTS_DIR = "tmp"  # where the constitution has agents write their handoff drafts

ROLES_TSV = os.path.join(STATE_DIR, "roles.tsv")  # the role table the helpers read
# Roles that another host runs (role TAB host), beside roles.tsv, which names them too so
# that senders here may address them; the daemon sends their mail across hosts.
REMOTE_TSV = os.path.join(STATE_DIR, "remote.tsv")
SESSION_RECORD = os.path.join(STATE_DIR, "run.json")  # the swarm's run: roles, ports, pids
# Held by `up`, `down` and `gc` for as long as they start or stop the swarm: one at a time.
SESSION_LOCK = os.path.join(STATE_DIR, "session.lock")
# Taken for an instant around every write of the session record, and the read it builds on.
SESSION_RECORD_LOCK = os.path.join(STATE_DIR, "run.json.lock")
HANDOFFS_NAME = "handoffs"  # a checkout's mailbox, in its state (statedir.py)
HANDOFFS = os.path.join(STATE_DIR, HANDOFFS_NAME)  # the same, seen from the checkout
ORPHANED_MAILBOXES = os.path.join(STATE_DIR, "orphaned-mailboxes")  # of removed worktrees
# Repositories found inside a worktree that was removed: kept, never deleted with it.
NESTED_KEPT = os.path.join(STATE_DIR, "nested-repositories")
DAEMON_DIR = os.path.join(STATE_DIR, "daemon")  # handoffd's pid, lock, log and stop files
BUDGET_STATE = os.path.join(DAEMON_DIR, "budget.json")  # the budgets the run has crossed
# A copy of each handoff delivered, per recipient, until it is completed (daemon/keeping.py).
DELIVERED_DIR = os.path.join(DAEMON_DIR, "delivered")
HELD_FILE = os.path.join(DAEMON_DIR, "held.json")  # outbox files the daemon cannot deliver yet
RUNNER_PID = os.path.join(STATE_DIR, "runner.pid")
RUNNER_LOCK = os.path.join(STATE_DIR, "runner.lock")
AGENTS_DIR = os.path.join(STATE_DIR, "agents")  # each role process's starts and exits
LOGS_DIR = os.path.join(STATE_DIR, "logs")  # each role's and the runner's output
SETUP_FAILED_DIR = os.path.join(STATE_DIR, "setup-failed")  # roles whose worktree setup failed
PROMPTS_DIR = os.path.join(STATE_DIR, "prompts")  # each role's instruction file
BIN_DIR = os.path.join(STATE_DIR, "bin")  # the helper shims, first on every role's PATH
RUNS_DIR = os.path.join(STATE_DIR, "runs")  # planned runs: journal, reports, ledgers
GIT_LOCK = os.path.join(STATE_DIR, "git.lock")  # serialises our changes to the repository
INTENTS_DIR = os.path.join(STATE_DIR, "worktrees")  # worktree creations in progress
EVENTS_LOG = os.path.join(STATE_DIR, "events.jsonl")  # the project's event log (events.py)

# The SwarmForge helper scripts (in `BIN_DIR` and in bin/), and the arguments each
# passes to the `swarmforge` command.
SCRIPTS = {
    "swarm_handoff.sh": ("handoff",),
    "ready_for_next.sh": ("ready",),
    "ready_for_next_task.sh": ("ready", "--mode", "task"),
    "ready_for_next_batch.sh": ("ready", "--mode", "batch"),
    "done_with_current.sh": ("done",),
    "done_with_current_task.sh": ("done", "--mode", "task"),
    "done_with_current_batch.sh": ("done", "--mode", "batch"),
}
