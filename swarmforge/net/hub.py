"""Commits between hosts through the hub: the git repository every host can reach.

A `git_handoff` names a commit of the sender's clone. Before the handoff is published
the sender's daemon pushes that commit to the hub under `refs/swarmforge/commits/<id>`;
before the recipient's copy is written the receiving daemon fetches it from there into
the same ref of its own clone, so the copy's merge check, and the recipient's
`git merge <id>`, find it. The ref also keeps the commit from being collected while
the handoff waits.

The hub is always named by its URL: no remote is ever added to anyone's
configuration, and it follows `--`, so that git never reads it as an option. git never
asks for a password here (no terminal), an ssh hub that does not answer gives up after
a while instead of holding the daemon, and only the file, ssh, git and https transports
are allowed: a hub such as `ext::<command>` runs nothing.
"""

from __future__ import annotations

from swarmforge.errors import SwarmforgeError
from swarmforge.git import command, objects
from swarmforge.proc import policy, spawn
from swarmforge.text import shown_url

REF_PREFIX = "refs/swarmforge/commits/"
# What every git command that reaches the hub runs with: never a prompt, and an ssh
# hub that does not answer is given up on.
QUIET = {"GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=15"}
# The git options of those commands: only these transports, whatever git's configuration
# allows; ext:: would run a command the hub's value names. protocol.ext.allow is named as
# well because a protocol's own setting, in any git configuration, outranks protocol.allow.
PROTOCOLS = (
    *("-c", "protocol.allow=never", "-c", "protocol.ext.allow=never"),
    *("-c", "protocol.file.allow=always", "-c", "protocol.ssh.allow=always"),
    *("-c", "protocol.git.allow=always", "-c", "protocol.https.allow=always"),
)


def quiet_env() -> policy.Environment:
    """This process's environment with QUIET: for git commands that reach the hub."""
    return policy.child_env(QUIET)


class HubError(SwarmforgeError):
    """The hub could not be reached or refused; the message says why in one line."""


def ref(commit: str) -> str:
    """The hub's (and every clone's) ref that holds the commit `commit` (a full id)."""
    return REF_PREFIX + commit


def _git(cwd: str, *args: str) -> spawn.Completed:
    try:
        return command.run(cwd, *args, env=quiet_env(), options=PROTOCOLS)
    except (SwarmforgeError, OSError) as exc:
        raise HubError(f"git could not run: {exc}") from None


def _failed(what: str, hub: str, result: spawn.Completed) -> HubError:
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    said = f": {lines[-1]}" if lines else ""
    return HubError(f"cannot {what} {shown_url(hub)} (git exited {result.returncode}){said}")


def full_id(cwd: str, commit: str) -> str | None:
    """The full id of commit `commit` in the repository at `cwd`, or None if it lacks it
    (looked up as the gate looks it up: a branch spelt like it never stands in)."""
    try:
        return objects.lookup(cwd, commit, abbreviation=True).commit if commit else None
    except command.GitFailed as exc:
        raise HubError(exc.message.rstrip(".")) from None
    except (SwarmforgeError, OSError) as exc:
        raise HubError(f"git could not run: {exc}") from None


def push(cwd: str, hub: str, commit: str) -> str:
    """Push commit `commit` of the repository at `cwd` to the hub; its full id.

    Pushing a ref the hub already holds at that commit is a no-op, so a sender that
    pushes again after a crash does no harm.
    """
    oid = full_id(cwd, commit)
    if oid is None:
        raise HubError(f"commit {commit} is not in {cwd}")
    result = _git(cwd, "push", "--quiet", "--no-verify", "--", hub, f"{oid}:{ref(oid)}")
    if not result.ok:
        raise _failed("push to", hub, result)
    return oid


def fetch(cwd: str, hub: str, commit: str) -> bool:
    """Make commit `commit` (a full id or a prefix) present in the repository at `cwd`.

    Nothing is fetched when it is there already. True if it is there now; False if
    the hub does not hold it either (HubError when the hub cannot be asked).
    """
    if full_id(cwd, commit) is not None:
        return True
    if len(commit) == 40:  # the sender named the full id: fetch its ref straight away
        wanted = ref(commit.lower())
        if _git(cwd, "fetch", "--quiet", "--no-tags", "--", hub, f"+{wanted}:{wanted}").ok:
            return True
    listed = _git(cwd, "ls-remote", "--", hub, f"{ref(commit.lower())}*")
    if not listed.ok:
        raise _failed("list the commits of", hub, listed)
    names = [line.split("\t")[-1] for line in listed.stdout.decode().splitlines()]
    found = [n for n in names if n.startswith(REF_PREFIX + commit.lower())]
    if len(found) != 1:
        return False  # none, or a prefix that names several: never guess
    result = _git(cwd, "fetch", "--quiet", "--no-tags", "--", hub, f"+{found[0]}:{found[0]}")
    if not result.ok:
        raise _failed("fetch from", hub, result)
    return True
