"""The per-item loop of headless roles: exec commands, and claude or codex agents.

For each task (or batch) the role accepts, its command runs once in the role's
worktree: an exec role's command with the ready printout on stdin, a headless agent
with the printout in its prompt (see each agent's command.py under agents/). Exit 0
completes the item. A non-zero exit is retried RETRIES times; then the item is
completed with the headers `outcome: failed` and `exit_code: N`, the failure is
logged, and the role moves on. An item the command completed itself (with
done_with_current.sh) is left as it is, and so is one whose command failed while the
loop was being stopped: it stays in process and is resumed on the next start.

`serve_role` is the role's process: it builds the loop from the session record and
serves until SIGTERM.
"""
