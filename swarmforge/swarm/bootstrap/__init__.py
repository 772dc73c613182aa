"""Bootstrap of a role's new worktree: the git-ignored files it lacks, then setup commands.

A worktree is a fresh checkout of the project's last commit, so it has none of
the files git ignores (`.env`, `node_modules`, caches) and an agent's first
build or test would fail. `[bootstrap]` in swarmforge.toml names what to copy
or link from the main checkout and the commands to run once in the new
worktree (config/startsettings.py). Only paths git ignores are taken: what git tracks is
already in the worktree, at the worktree's own commit, and must not be replaced
by the main checkout's copy. Nothing is written outside the worktree and
nothing already there is overwritten.

A setup command that fails or runs out of time marks the role `setup-failed`
(`.swarmforge/setup-failed/<role>.json`): `up` starts every other role but not
that one, and the next `up` runs its bootstrap again.
"""
