"""`gc --artifacts`: the git-ignored build output of stopped roles' worktrees.

Dozens of worktrees, each with its own build output and dependencies, fill a disk
(swarm/disk.py measures them).

The sweep removes only what git itself calls ignored in a stopped role's worktree, as
`git clean -dX` would, listed first and removed here, so a dry run names exactly what a
real one removes. Untracked files that git does not ignore are work, not output, and
stay; so do the main checkout (the user's own), swarmforge's state, nested
repositories, and every worktree a process still works in.
"""
