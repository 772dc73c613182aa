"""`swarmforge demo`: a whole swarm on a throw-away project, with no AI agent needed.

Two headless `exec` roles: a coder that adds a function with its test, commits
and hands the commit to QA; and QA, in batch mode, that merges it, runs the
project's tests and hands the result back. The demo starts the swarm, hands
the coder its first task, watches until the work comes back, prints the audit
trail of every handoff, stops the swarm and says where the project is.
"""
