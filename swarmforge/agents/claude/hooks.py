"""claude's hooks: the settings that make them report its state, and what their input says.

claude's `--settings` always carries `hooks` (UserPromptSubmit, PreToolUse,
PostToolUse, Notification, Stop) that run `swarmforge agent-state --agent claude`
with the hook's JSON on stdin (see hints.py). They report both sides of a turn:
UserPromptSubmit and PreToolUse/PostToolUse: working; Notification: waiting for a
person, or idle for its idle reminder; Stop: idle.
"""

from __future__ import annotations

# The swarm's `swarmforge` comes first on every role's PATH (shims.py). A hook that
# fails is reported by claude and ignored; only exit status 2 would block a tool call.
STATE_CALLBACK = "swarmforge agent-state --agent claude"
CLAUDE_HOOKS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop")
CLAUDE_WORKING = ("UserPromptSubmit", "PreToolUse", "PostToolUse")
CLAUDE_IDLE_NOTICES = ("idle_prompt",)  # its reminder after a while without input


def state_hooks() -> dict[str, object]:
    """claude's `hooks` settings that report its state to swarmforge (see hints.py)."""
    hook = {"type": "command", "command": STATE_CALLBACK}
    return {event: [{"matcher": "", "hooks": [hook]}] for event in CLAUDE_HOOKS}


def session_of(payload: dict[str, object]) -> str | None:
    """The session id a hook's JSON input names (claude's and codex's hooks both say it)."""
    found = payload.get("session_id")
    if isinstance(found, str) and found and found.isprintable() and len(found) <= 200:
        return found
    return None


def from_claude(payload: dict[str, object]) -> tuple[str, str] | None:
    """The state and source a claude hook's JSON input says, or None for other hooks."""
    event = str(payload.get("hook_event_name", ""))
    if event in CLAUDE_WORKING:
        return "working", f"claude {event}"
    if event == "Stop":
        return "idle", "claude Stop"
    if event == "Notification":
        kind = str(payload.get("notification_type", ""))
        message = str(payload.get("message", ""))
        if kind in CLAUDE_IDLE_NOTICES or "waiting for your input" in message:
            return "idle", "claude Notification"
        return "waiting", "claude Notification"
    return None
