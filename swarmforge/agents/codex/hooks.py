"""codex's hooks and notify program: the options that report its state, and what they say.

codex's hooks (UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, Stop) say
when a turn starts, a tool runs, an approval is asked for and a turn ends; its `notify`
program says only the last. `state_hook_args` gives them as one `-c hooks={...}`
option for codex's command line. codex runs a hook that no administrator manages
only once its hash is trusted, so the option also carries the trust of exactly
these hooks (codex's `hooks.state`, keyed by where a hook comes from: the command
line here), and of no other hook.

Hooks report both sides of a turn (UserPromptSubmit, PreToolUse, PostToolUse:
working; PermissionRequest: waiting; Stop: idle). The `notify` program reports only
an end (`agent-turn-complete`, its one payload type), and not only of the agent's
turns: codex also notifies when the side thread that titles its session ends, just
after the agent's first turn has begun (see hints.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

# The swarm's `swarmforge` comes first on every role's PATH (shims.py); the hook's JSON
# comes on stdin. A hook that fails or says nothing leaves codex as it was.
STATE_CALLBACK = "swarmforge agent-state --agent codex"
STATE_HOOKS = ("UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop")
HOOK_TIMEOUT = 10  # seconds; codex waits for a hook before it goes on (its default is 600)
# Where codex says the hooks of a `-c` option come from; their trust keys start with it.
SESSION_FLAGS = "/<session-flags>/config.toml"
CODEX_WORKING = ("UserPromptSubmit", "PreToolUse", "PostToolUse")
CODEX_NOTIFY = "codex notify"  # the source of a hint from codex's notify program


def _snake(event: str) -> str:
    """codex's label of a hook event in trust keys and hashes: PreToolUse -> pre_tool_use."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _state_handler() -> dict[str, Any]:
    """The one command handler of each state hook, with the fields codex's hash covers."""
    return {"type": "command", "command": STATE_CALLBACK, "timeout": HOOK_TIMEOUT, "async": False}


def hook_hash(event: str, handler: Mapping[str, Any]) -> str:
    """The hash by which codex trusts `handler` as the only hook of its group for `event`.

    codex hashes the group as TOML would hold it (no matcher: none was given) with its
    event's label, as JSON with sorted keys and no spaces.
    """
    identity = {"event_name": _snake(event), "hooks": [dict(handler)]}
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def state_hooks() -> dict[str, Any]:
    """codex's `hooks` table reporting its state to swarmforge, each hook trusted."""
    handler = _state_handler()
    table: dict[str, Any] = {event: [{"hooks": [handler]}] for event in STATE_HOOKS}
    table["state"] = {
        f"{SESSION_FLAGS}:{_snake(event)}:0:0": {"trusted_hash": hook_hash(event, handler)}
        for event in STATE_HOOKS
    }
    return table


def inline_toml(value: Any) -> str:
    """`value` as a TOML inline value (a `-c` option's value is one line of TOML)."""
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{json.dumps(k)} = {inline_toml(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(inline_toml(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))  # a JSON string of these characters is a TOML basic string


def state_hook_args() -> list[str]:
    """codex's options that make its hooks report its state (see hints.py)."""
    return ["-c", f"hooks={inline_toml(state_hooks())}"]


def from_codex(payload: dict[str, object]) -> tuple[str, str] | None:
    """The state and source of a codex hook's JSON input or `notify` argument, or None."""
    event = str(payload.get("hook_event_name", ""))
    if event in CODEX_WORKING:
        return "working", f"codex {event}"
    if event == "PermissionRequest":
        return "waiting", f"codex {event}"
    if event == "Stop":
        return "idle", f"codex {event}"
    if payload.get("type") == "agent-turn-complete":
        return "idle", CODEX_NOTIFY
    return None
