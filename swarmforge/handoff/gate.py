"""The gate: validate a handoff, stamp it, install it in an outbox.

Agents reach it with a draft (`swarm_handoff.sh <draft>`); the person running the
swarm reaches it with `swarmforge send`, whose handoffs come from `user` and wait
in the main checkout's outbox.
"""

from __future__ import annotations

import os
import stat
import time

from swarmforge import events, fsutil, proc, roletable, times
from swarmforge.errors import Refused, SwarmforgeError
from swarmforge.handoff import draft as drafts
from swarmforge.handoff import sequence
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.handoff.message import Handoff

TYPE_CHECKING = False  # typing itself costs milliseconds on the helpers' hot path
if TYPE_CHECKING:
    from typing import NoReturn

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

SEND_USAGE = """Usage: swarmforge send ROLE[,ROLE...] [--type note|git_handoff] [--priority NN]
                       [--commit SHA] [--task NAME] TEXT|-

A note's 'message' is the first line of TEXT (cut to 80 characters); a git_handoff
needs --commit (10 hex characters) and takes its 'task' from --task or from the
first line of TEXT. The whole TEXT follows in the body."""

# A file name has at most 255 bytes, and the temporary names a handoff is written
# under (fsutil.temp_name) are longer than its own.
MAX_NAME_BYTES = 255 - fsutil.TEMP_NAME_EXTRA
MAX_ERRORS = 20  # a draft of garbage has an error per line; the first ones say enough
SEND_LABEL = "swarmforge send"
CLAIM_SUFFIX = ".queueing"  # .<draft>.<pid>.queueing: a draft a gate has taken
USER = "user"  # the sender of `swarmforge send`: the person running the swarm, never a role


class HandoffInvalid(Refused):
    """A draft the gate refuses, with every error found (the first MAX_ERRORS shown)."""

    def __init__(self, draft: str, errors: list[str], usage: str = USAGE) -> None:
        shown = [f"- {e}" for e in errors[:MAX_ERRORS]]
        if len(errors) > MAX_ERRORS:
            shown.append(f"... and {len(errors) - MAX_ERRORS} more")
        super().__init__(f"HANDOFF INVALID: {draft}", details=("", "Errors:", *shown, "", usage))
        self.errors = errors


def build(draft: drafts.Draft, sender: str, seq: str, now: float) -> tuple[str, Handoff]:
    """The file name and contents of the handoff made from a valid draft."""
    stamp = times.compact(now)
    headers = [
        ("id", f"{stamp}_{seq}_from_{sender}"),
        ("from", sender),
        ("to", ",".join(draft.recipients)),
        ("priority", draft.priority),
        ("type", draft.type),
    ]
    if draft.type == "git_handoff":
        headers += [("role", sender), ("task", draft.task), ("commit", draft.commit)]
        last_line = f"merge_and_process {sender} {draft.commit}"
    else:
        headers.append(("message", draft.message))
        last_line = draft.message
    headers.append(("created_at", times.stamp(now)))
    name = f"{draft.priority}_{stamp}_{seq}_from_{sender}_to_{'_'.join(draft.recipients)}.handoff"
    return name, Handoff(headers, f"Re-read your role and constitution.\n\n{last_line}\n")


def queue_handoff(draft_path: str, *, cwd: str, role: str) -> str:
    """Validate the draft at `draft_path` and queue it from the worktree at `cwd`; its path."""
    path = os.path.join(cwd, draft_path)
    _check_draft_file(path, draft_path)
    sender = role
    if not sender:
        raise SwarmforgeError("Set SWARMFORGE_ROLE.")
    root = roletable.find_root(cwd)
    roles = roletable.read_roles(root)
    if sender not in roles:
        raise SwarmforgeError(f"Unknown sender role: {sender}")
    if sender == USER:
        # Handoffs from `user` are the person's own (swarmforge send); no agent speaks for them.
        raise SwarmforgeError(f"Sender role '{USER}' is reserved for swarmforge send.")
    claimed = _claim(path, draft_path)
    try:
        data = _read_draft(claimed, draft_path)
        draft, errors = drafts.validate(data, frozenset(roles), _resolver(cwd))
        if draft is None:
            raise HandoffInvalid(draft_path, errors)
        final, _ = _install(root, Mailbox(cwd), draft, sender, draft_path, USAGE)
    except BaseException:
        _unclaim(claimed, path)
        raise
    os.unlink(claimed)
    return final


def _claim_name(path: str, pid: int) -> str:
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{pid}{CLAIM_SUFFIX}")


def _claim(path: str, label: str) -> str:
    """Take the draft at `path` for this gate alone by renaming it; its new path.

    Two gates on one draft cannot both queue it: only one rename succeeds. And a gate
    killed after queueing leaves no draft at `path` to be sent a second time.
    """
    claimed = _claim_name(path, os.getpid())
    try:
        os.rename(path, claimed)
    except FileNotFoundError:
        _missing(path, label)
    return claimed


def _unclaim(claimed: str, path: str) -> None:
    """Give a draft that was not queued back its name (kept as claimed if that is taken)."""
    try:
        fsutil.move_noreplace(claimed, path)
    except OSError:
        pass  # a new draft was written meanwhile: the claimed copy stays beside it


def _missing(path: str, label: str) -> NoReturn:
    """Refuse a draft that is not there, saying where another gate has it if one does."""
    head, tail = os.path.split(path)
    prefix = f".{tail}."
    try:
        names = [n for n in os.listdir(head or ".") if n.startswith(prefix)]
    except OSError:
        names = []
    for name in sorted(names):
        pid = name[len(prefix) : -len(CLAIM_SUFFIX)] if name.endswith(CLAIM_SUFFIX) else ""
        if not (pid.isascii() and pid.isdigit()):
            continue
        if proc.is_alive(int(pid)):
            raise SwarmforgeError(
                f"Draft file is being queued by another gate (pid {pid}): {label}"
            )
        raise SwarmforgeError(
            f"Draft file not found: {label}",
            hint=f"A gate that was interrupted left it as {os.path.join(head, name)}; "
            "look in outbox/ and sent/ before queueing it again.",
        )
    raise SwarmforgeError(f"Draft file not found: {label}")


def _check_draft_file(path: str, label: str) -> None:
    """Refuse a missing draft, and anything but a regular file, before reading it."""
    try:
        st = os.stat(path)
    except OSError:
        _missing(path, label)
    if not stat.S_ISREG(st.st_mode):
        raise SwarmforgeError(
            f"Draft file is {fsutil.kind_of(st.st_mode)}, not a regular file: {label}"
        )


def _read_draft(path: str, label: str) -> bytes:
    """The draft's bytes, refusing a draft too large to be a few header lines unread."""
    try:
        # A draft may be a symbolic link to a file; never a FIFO, which would block.
        return fsutil.read_regular(path, limit=drafts.MAX_BYTES, follow=True)
    except fsutil.FileTooLarge as exc:
        raise HandoffInvalid(
            label,
            [
                f"The draft is {exc.size} bytes; a draft is a few header lines, "
                f"at most {drafts.MAX_BYTES} bytes."
            ],
        ) from None
    except fsutil.NotRegularFile as exc:
        raise SwarmforgeError(f"Draft file is {exc.kind}, not a regular file: {label}") from None
    except FileNotFoundError:
        raise SwarmforgeError(f"Draft file not found: {label}") from None


def _resolver(cwd: str) -> drafts.CommitResolver:
    def resolve(commit: str) -> tuple[str | None, str | None]:
        """(canonical 10-character abbreviation, None), or (None, the gate's error)."""
        from swarmforge.git.command import GitFailed
        from swarmforge.git.objects import NOTHING, lookup

        try:
            found = lookup(cwd, commit, abbreviation=True)
        except GitFailed:
            found = NOTHING  # no repository to look in: no object matches
        if found.oid is None:
            return None, (
                "Header 'commit' must resolve to exactly one Git object; "
                f"'{commit}' matched {found.matches}."
            )
        if found.kind != "commit":
            return None, (
                f"Header 'commit' must resolve to a commit; '{commit}' resolves to '{found.kind}'."
            )
        return found.oid[:10], None

    return resolve


def _install(
    root: str,
    mailbox: Mailbox,
    draft: drafts.Draft,
    sender: str,
    label: str,
    usage: str,
    extra: str = "",
) -> tuple[str, Handoff]:
    """Stamp a valid draft from `sender`, with `extra` after the generated body, and queue it
    (a `handoff-queued` event in the log of the project at `root`)."""
    # Before the sequence counter is written in the mailbox root: a mailbox directory that
    # a commit turned into a symbolic link is refused, never written through.
    mailbox.ensure(Box.OUTBOX_TMP, Box.OUTBOX, Box.SENT, Box.FAILED)
    now = time.time()
    seq = sequence.next_sequence(mailbox.root)
    name, handoff = build(draft, sender, seq, now)
    if len(name.encode()) > MAX_NAME_BYTES:
        raise HandoffInvalid(
            label,
            [
                f"Header 'to' names too many recipients for one file "
                f"name ({len(name.encode())} bytes); split the handoff."
            ],
            usage,
        )
    if extra:
        handoff = Handoff(handoff.headers, f"{handoff.body}\n{extra}")
    final = mailbox.install(name, handoff)
    queued = {"name": name, "from": sender, "to": ",".join(draft.recipients)}
    queued.update(priority=draft.priority, type=draft.type, task=draft.task, commit=draft.commit)
    events.emit(root, "handoff-queued", {k: v for k, v in queued.items() if v})
    return final, handoff


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
        fields["task"] = task or drafts.task_name(text)
    else:
        # A placeholder keeps an empty text from being reported twice.
        fields["message"] = drafts.summary(text) or "(empty)"
    if not all(_is_utf8(value) for value in (text, *fields.values())):
        errors.append("The text or an option is not valid UTF-8.")
    draft, errors = drafts.check(
        {k: v for k, v in fields.items() if v}, frozenset(roles), _resolver(root), errors
    )
    if draft is None:
        raise HandoffInvalid(SEND_LABEL, errors, SEND_USAGE)
    body = text if text.endswith("\n") else text + "\n"
    extra = "" if draft.type == "note" and body == draft.message + "\n" else body
    return _install(root, Mailbox(root), draft, USER, SEND_LABEL, SEND_USAGE, extra)


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False  # undecodable bytes of an argument, kept as surrogates
    return True
