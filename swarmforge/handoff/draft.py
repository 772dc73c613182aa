"""The gate's rules for a draft's fields: a valid `Draft`, or every error found."""

from __future__ import annotations

from swarmforge.text import has_control

TYPE_CHECKING = False  # typing itself costs milliseconds on the helpers' hot path
if TYPE_CHECKING:
    from collections.abc import Callable

    # resolve(commit) -> (canonical abbreviation, None) or (None, error message)
    CommitResolver = Callable[[str], tuple[str | None, str | None]]

ALLOWED = ("type", "to", "priority", "task", "commit", "message")
FIELDS_BY_TYPE = {
    "git_handoff": ("type", "to", "priority", "task", "commit"),
    "note": ("type", "to", "priority", "message"),
}
HEX = frozenset("0123456789abcdefABCDEF")
MAX_LINE = 80
# A draft is a few header lines; anything larger is refused before it is read whole.
MAX_BYTES = 64 * 1024
TASK_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class Draft:
    """A valid draft: what the gate stamps and installs."""

    __slots__ = ("commit", "message", "priority", "recipients", "task", "type")

    def __init__(
        self,
        type_: str,
        recipients: list[str],
        priority: str,
        task: str = "",
        commit: str = "",
        message: str = "",
    ) -> None:
        self.type = type_
        self.recipients = recipients
        self.priority = priority
        self.task = task
        self.commit = commit
        self.message = message


def _recipients(to: str, roles: frozenset[str], errors: list[str]) -> list[str]:
    out: list[str] = []
    for recipient in to.split(","):
        if not recipient:
            errors.append("Header 'to' contains an empty recipient.")
            continue
        if "_" in recipient:
            errors.append(
                f"Recipient role '{recipient}' is invalid; role names may not contain underscores."
            )
        if recipient in out:
            errors.append(f"Duplicate recipient '{recipient}'.")
        elif recipient not in roles:
            errors.append(f"Unknown recipient role '{recipient}'.")
        out.append(recipient)
    return out


def _one_line(field: str, value: str, errors: list[str]) -> None:
    if len(value) > MAX_LINE:
        errors.append(
            f"Header '{field}' must be no longer than {MAX_LINE} characters; got {len(value)}."
        )


def check(
    headers: dict[str, str],
    roles: frozenset[str],
    resolve: CommitResolver,
    errors: list[str] | None = None,
) -> tuple[Draft | None, list[str]]:
    """Check draft fields (after `errors` already found); (Draft, []) or (None, every error)."""
    errors = [] if errors is None else errors
    for field, value in headers.items():
        if has_control(value):
            errors.append(f"Header '{field}' may not contain control characters.")
    type_ = headers.get("type", "")
    to = headers.get("to", "")
    priority = headers.get("priority", "")
    for field in ("type", "to", "priority"):
        if not headers.get(field):
            errors.append(f"Missing required header '{field}'.")
    if type_ and type_ not in FIELDS_BY_TYPE:
        errors.append(f"Header 'type' must be one of git_handoff or note; got '{type_}'.")
    if priority and not (len(priority) == 2 and priority.isascii() and priority.isdigit()):
        errors.append(f"Header 'priority' must be two digits from 00 to 99; got '{priority}'.")
    recipients = _recipients(to, roles, errors) if to else []
    for field in headers:
        if type_ in FIELDS_BY_TYPE and field not in FIELDS_BY_TYPE[type_]:
            errors.append(f"Header '{field}' is not allowed for type '{type_}'.")
    task = headers.get("task", "")
    commit = headers.get("commit", "")
    message = headers.get("message", "")
    canonical = ""
    if type_ == "git_handoff":
        if not task:
            errors.append("Missing required header 'task' for git_handoff.")
        else:
            _one_line("task", task, errors)
        if not commit:
            errors.append("Missing required header 'commit' for git_handoff.")
        elif len(commit) != 10 or not all(c in HEX for c in commit):
            errors.append(
                f"Header 'commit' must be exactly 10 hexadecimal characters; got '{commit}'."
            )
        else:
            resolved, problem = resolve(commit)
            if problem:
                errors.append(problem)
            canonical = resolved or ""
    if type_ == "note":
        if not message:
            errors.append("Missing required header 'message' for note.")
        else:
            _one_line("message", message, errors)
    if errors:
        return None, errors
    return Draft(type_, recipients, priority, task, canonical, message), []
