"""The git layer: branch naming, worktree create / remove / prune, rescue of uncommitted work.

Kept import-free so that importing one module of the layer loads only what it needs;
`repo` is the only module that imports pygit2; `command` is the only one that runs git.
"""
