"""A swarm session: bringing it up and down, and keeping it whole while it runs.

Placement of roles in worktrees, their bootstrap, the start caps, each role's pane or
headless process, status, teardown, `gc`, `gc --artifacts` and `repair`.
"""
