"""The gate's refusal of a draft: every error it found, and the usage that says what a
draft holds."""

from __future__ import annotations

from swarmforge.errors import Refused

USAGE = """Usage: swarm_handoff.sh <draft-file>

Draft formats:

type: git_handoff
to: <role>[,<role>...]
priority: NN
task: <short-stable-task-name>
commit: <10-char-commit-abbrev>

type: note
to: <role>[,<role>...]
priority: NN
message: <one line, max 80 chars>"""

MAX_ERRORS = 20  # a draft of garbage has an error per line; the first ones say enough


class HandoffInvalid(Refused):
    """A draft the gate refuses, with every error found (the first MAX_ERRORS shown)."""

    def __init__(self, draft: str, errors: list[str], usage: str = USAGE) -> None:
        shown = [f"- {e}" for e in errors[:MAX_ERRORS]]
        if len(errors) > MAX_ERRORS:
            shown.append(f"... and {len(errors) - MAX_ERRORS} more")
        super().__init__(f"HANDOFF INVALID: {draft}", details=("", "Errors:", *shown, "", usage))
        self.errors = errors
