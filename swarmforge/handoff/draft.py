"""A draft's text and the gate's rules for it: its bytes read as header fields (UTF-8 line
by line, headers only, none reserved, unknown or repeated), then each field checked; a
valid `Draft`, or `HandoffInvalid` with every error found and the usage that says what
a draft holds."""

from __future__ import annotations

from swarmforge.errors import Refused
from swarmforge.handoff.message import RESERVED, line_problem
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


BOM = b"\xef\xbb\xbf"


def _header_lines(text: str, errors: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    in_body = False
    for number, line in enumerate(lines, start=1):
        if in_body:
            if line:
                errors.append(
                    f"Line {number}: draft handoffs may contain headers only; "
                    "payloads are generated by swarm_handoff.sh."
                )
            continue
        if not line:
            in_body = True
            continue
        problem = line_problem(line)
        if problem:
            errors.append(f"Line {number}: {problem}")
            continue
        field, _, value = line.partition(": ")
        if field in RESERVED:
            errors.append(
                f"Line {number}: header '{field}' is reserved and must not be written by agents."
            )
        elif field not in ALLOWED:
            errors.append(f"Line {number}: unknown header '{field}'.")
        elif field in headers:
            errors.append(f"Line {number}: duplicate header '{field}'.")
        else:
            headers[field] = value
    return headers


def _decode(data: bytes, errors: list[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    good: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            good.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            errors.append(f"Line {number}: not valid UTF-8.")
            good.append("")  # keeps the line numbers of later lines right
    return "\n".join(good)


def validate(
    data: bytes, roles: frozenset[str], resolve: CommitResolver
) -> tuple[Draft | None, list[str]]:
    """Check draft bytes; (Draft, []) when valid, else (None, every error found)."""
    errors: list[str] = []
    if data.startswith(BOM):
        data = data[len(BOM) :]  # written by some editors; configuration files accept it too
    headers = _header_lines(_decode(data, errors), errors)
    return check(headers, roles, resolve, errors)
