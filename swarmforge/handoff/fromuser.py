"""`swarmforge send`: a handoff from the person running the swarm, through the gate.

Its handoffs come from `user` and wait in the main checkout's outbox.
"""

from __future__ import annotations

from swarmforge import roletable
from swarmforge.handoff.draft import HandoffInvalid, check
from swarmforge.handoff.firstline import summary, task_name
from swarmforge.handoff.gate import USER, commit_resolver, queue_draft
from swarmforge.handoff.mailbox import Mailbox
from swarmforge.handoff.message import Handoff

SEND_USAGE = """Usage: swarmforge send ROLE[,ROLE...] [--type note|git_handoff] [--priority NN]
                       [--commit SHA] [--task NAME] TEXT|-

A note's 'message' is the first line of TEXT (cut to 80 characters); a git_handoff
needs --commit (10 hex characters) and takes its 'task' from --task or from the
first line of TEXT. The whole TEXT follows in the body."""

SEND_LABEL = "swarmforge send"


def send(
    root: str,
    to: str,
    text: str,
    *,
    type_: str = "note",
    priority: str = "50",
    commit: str = "",
    task: str = "",
) -> tuple[str, Handoff]:
    """Queue a handoff from `user` in the main checkout's outbox of the project at `root`.

    The same rules as a draft apply to the headers; a note's `message` is the first
    line of `text` (cut to 80 characters) and a git_handoff's `task`, unless given,
    is made from it. The whole text follows the generated body unless the message
    already holds all of it. Returns the queued file's path and its contents.
    """
    roles = roletable.read_roles(root)
    errors = []
    if not text.strip():
        errors.append("The text is empty: say what the handoff is about.")
    fields = {"type": type_, "to": to, "priority": priority, "task": task, "commit": commit}
    if type_ == "git_handoff":
        fields["task"] = task or task_name(text)
    else:
        # A placeholder keeps an empty text from being reported twice.
        fields["message"] = summary(text) or "(empty)"
    if not all(_is_utf8(value) for value in (text, *fields.values())):
        errors.append("The text or an option is not valid UTF-8.")
    draft, errors = check(
        {k: v for k, v in fields.items() if v}, frozenset(roles), commit_resolver(root), errors
    )
    if draft is None:
        raise HandoffInvalid(SEND_LABEL, errors, SEND_USAGE)
    body = text if text.endswith("\n") else text + "\n"
    extra = "" if draft.type == "note" and body == draft.message + "\n" else body
    return queue_draft(root, Mailbox(root), draft, USER, SEND_LABEL, SEND_USAGE, extra)


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False  # undecodable bytes of an argument, kept as surrogates
    return True
