"""The headless backend: one supervising process that keeps every role's process running.

It is started detached by `up`, holds `.swarmforge/runner.lock` for its life,
records each role process's start and exit for `status`, restarts one that
failed as the role's `restart` setting says (with a growing pause), and on
SIGTERM ends every role's whole process tree before it exits. If it is killed with SIGKILL,
its roles' processes carry the run's tag, so `gc` or the next `up` finds them. Every
few seconds it records each role's agent state (agents/probe.py). Agents start, and
restart, only as the `[start]` caps allow (ramp.py); exec roles start at once.
"""
