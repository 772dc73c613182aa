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
