"""What the benchmarks share: git run with a fixed identity and no user configuration, and
one timed run of a command."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from swarmforge import statedir, stateview
from swarmforge.handoff import gate
from swarmforge.handoff.draft import Draft
from swarmforge.handoff.mailbox import Box, Mailbox

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "PATH": "/usr/bin:/bin",
}


def timed(argv: list[str], cwd: Path | str, env: dict[str, str] | None = None) -> float:
    """Seconds one run of `argv` in `cwd` took; stops the benchmark if it failed."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def git(cwd: Path | str, *args: str) -> str:
    """Run git in `cwd`; its stdout, stripped. Fails loudly."""
    result = subprocess.run(
        ["git", "-C", str(cwd), *args], env=GIT_ENV, check=True, capture_output=True, text=True
    )
    return result.stdout.strip()


def role_worktrees(
    root: Path, roles: list[str] | tuple[str, ...], elsewhere: tuple[str, ...] = ()
) -> dict[str, Path]:
    """A worktree per role on branch swarm/bench/<role>, and the roles.tsv that names them;
    `elsewhere`: roles another host runs, named in roles.tsv with no worktree here."""
    trees, rows = {}, []
    for role in [*roles, *elsewhere]:
        tree = root / ".worktrees" / role
        if role not in elsewhere:
            git(root, "worktree", "add", "-q", "-b", f"swarm/bench/{role}", str(tree))
            trees[role] = tree
        rows.append(f"{role}\t{role}\t{tree}\tswarmforge-{role}\t{role.title()}\tnone\ttask\n")
    Path(statedir.of(str(root))).mkdir(parents=True, exist_ok=True)  # as `up` makes it
    stateview.ensure(str(root))
    (root / ".swarmforge" / "roles.tsv").write_text("".join(rows))
    return trees


def commit(tree: Path, path: str, text: str) -> str:
    """Commit `path` holding `text`; the commit's 10-character abbreviation."""
    (tree / path).write_text(text)
    git(tree, "add", path)
    git(tree, "commit", "-q", "-m", f"change {path}")
    return git(tree, "rev-parse", "--short=10", "HEAD")


def queue(sender: Path, draft: Draft, seq: int) -> tuple[str, str]:
    """Write a handoff under outbox/tmp/ as the gate does; (temporary path, final path)."""
    box = Mailbox(str(sender))
    name, handoff = gate.build(draft, sender.name, f"{seq:06d}", time.time())
    box.ensure(Box.OUTBOX_TMP)
    tmp = box.path(Box.OUTBOX_TMP, name + ".tmp")
    with Path(tmp).open("wb") as f:
        f.write(handoff.render())
        f.flush()
        os.fsync(f.fileno())
    return tmp, box.path(Box.OUTBOX, name)


def delivered(
    sender: Path, recipient: Path, draft: Draft, seq: int, timeout: float = 30.0
) -> tuple[float, str]:
    """Seconds from the rename into the sender's outbox to the copy in the recipient's
    inbox/new/ (the daemons running); the copy's path."""
    tmp, final = queue(sender, draft, seq)
    staged = Path(tmp)
    copy = Path(Mailbox(str(recipient)).path(Box.NEW), Path(final).name)
    start = time.perf_counter()
    staged.rename(final)
    deadline = time.monotonic() + timeout
    while not copy.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"not delivered within {timeout:g} s: {final}")
        time.sleep(0.0001)
    return time.perf_counter() - start, str(copy)
