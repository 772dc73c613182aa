"""Test support: real git projects with role worktrees; bin/ scripts run as agents run them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarmforge import statedir, stateview, tagging, times
from swarmforge.config import sessionrecord
from swarmforge.daemon.paths import Paths
from swarmforge.git.lock import lock_path
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.layout import RUNNER_LOCK, RUNNER_PID
from swarmforge.locks import is_held
from swarmforge.tmux.server import Tmux

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "bin"
VENV_BIN = str(Path(sys.executable).parent)
SWARMFORGE = Path(VENV_BIN, "swarmforge")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` and return its stdout, stripped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    result = subprocess.run(
        ["git", "-C", str(cwd), *args], env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def make_template(path: Path) -> Path:
    """A git repository with one commit, to be copied per test."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README").write_text("project\n")
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "init")
    return path


class Project:
    """A project whose roles each work in their own git worktree."""

    def __init__(self, root: Path, roles: dict[str, str]) -> None:
        self.root = root
        self.roles = roles
        rows = []
        for role, mode in roles.items():
            if mode == "master":
                rows.append(
                    f"{role}\tmaster\t{root}\tswarmforge-{role}\t{role.title()}\tcodex\ttask"
                )
                continue
            tree = root / ".worktrees" / role
            git(root, "worktree", "add", "-q", "-b", f"swarm/test/{role}", str(tree))
            rows.append(f"{role}\t{role}\t{tree}\tswarmforge-{role}\t{role.title()}\tcodex\t{mode}")
        # As `up` makes it: the state in the git directory, `.swarmforge` a view of it.
        Path(statedir.of(str(root))).mkdir(parents=True, exist_ok=True)
        stateview.ensure(str(root))
        (root / ".swarmforge" / "roles.tsv").write_text("\n".join(rows) + "\n")

    def tree(self, role: str) -> Path:
        """The worktree of `role`."""
        return self.root if self.roles[role] == "master" else self.root / ".worktrees" / role

    def mailbox(self, role: str) -> Mailbox:
        """The mailbox of `role`."""
        return Mailbox(str(self.tree(role)))

    def box(self, role: str, box: str) -> Path:
        """A mailbox directory of `role`."""
        return Path(self.mailbox(role).path(box))

    def names(self, role: str, box: str) -> list[str]:
        """File names in a mailbox directory, sorted."""
        directory = self.box(role, box)
        return sorted(p.name for p in directory.iterdir()) if directory.exists() else []

    def commit(self, role: str, name: str = "work.txt") -> str:
        """Commit a change in the role's worktree; its 10-character abbreviation."""
        tree = self.tree(role)
        (tree / name).write_text(f"{name} {time.time_ns()}\n")
        git(tree, "add", name)
        git(tree, "commit", "-q", "-m", f"change {name}")
        return git(tree, "rev-parse", "--short=10", "HEAD")

    def draft(self, role: str, text: str, name: str = "draft.txt") -> Path:
        """Write a draft in the role's worktree."""
        path = self.tree(role) / name
        path.write_text(text)
        return path

    def deliver(self, outbox_file: str | Path) -> list[Path]:
        """Copy a queued handoff into each recipient's inbox/new, stamped as delivery does."""
        original = message.read(str(outbox_file))
        copies = []
        for recipient in (original.get("to") or "").split(","):
            copy = original.with_header("recipient", recipient).with_header(
                "enqueued_at", times.stamp()
            )
            target = self.box(recipient, Box.NEW)
            target.mkdir(parents=True, exist_ok=True)
            (target / Path(outbox_file).name).write_bytes(copy.render())
            copies.append(target / Path(outbox_file).name)
        return copies

    def enqueue(self, role: str, name: str, headers: dict[str, str], body: str = "work\n") -> Path:
        """Put a hand-made handoff straight into `role`'s inbox/new."""
        target = self.box(role, Box.NEW)
        target.mkdir(parents=True, exist_ok=True)
        path = target / name
        path.write_bytes(message.Handoff(list(headers.items()), body).render())
        return path


# What swarmforge itself keeps in a project, beside the roles' worktrees and its state:
# the captures of each role's work, their refs and the objects they add (git's object
# store only ever adds, by content).
CAPTURES = (".git/refs/swarmforge", ".git/logs/refs/swarmforge", ".git/objects/")


def script_env(role: str | None, path: str | None = None) -> dict[str, str]:
    """The environment an agent may give a helper: PATH and SWARMFORGE_ROLE only."""
    env = {"PATH": path if path is not None else f"{VENV_BIN}:/usr/bin:/bin"}
    # Test infrastructure only: lets coverage follow the helper into its interpreter.
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    if role is not None:
        env["SWARMFORGE_ROLE"] = role
    return env


def run_script(
    name: str,
    cwd: Path,
    role: str | None,
    *args: str,
    script_dir: Path = BIN,
    path: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a bin/ helper as an agent does: stripped environment, stdin closed."""
    return subprocess.run(
        [str(script_dir / name), *args],
        cwd=cwd,
        env=script_env(role, path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_close_stdin,
    )


def _close_stdin() -> None:
    os.close(0)


def retry_until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll `check` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def copy_tree(src: Path, dst: Path) -> Path:
    """Copy a template repository."""
    shutil.copytree(src, dst, symlinks=True)
    return dst


def run_cli(
    *args: str,
    cwd: Path,
    path_extra: str = "",
    role: str | None = None,
    timeout: float = 120,
    stdin: str | None = None,
    env_extra: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the `swarmforge` command with a minimal environment, as a user's shell would
    (plus `env_extra`)."""
    env = {"PATH": f"{path_extra}{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"}
    if role is not None:
        env["SWARMFORGE_ROLE"] = role
    env.update(env_extra or {})
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    return subprocess.run(
        [SWARMFORGE, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def queue_note(project: Project, sender: str, to: str, text: str = "m", draft: str = "d") -> str:
    """Queue a note from `sender` to `to` through the gate, as the sender's agent would."""
    from swarmforge.handoff import gate

    project.draft(sender, f"type: note\nto: {to}\npriority: 50\nmessage: {text}\n", draft)
    return gate.queue_handoff(draft, cwd=str(project.tree(sender)), role=sender)


def record_run(
    project: Project,
    *,
    state: str = "running",
    pids: dict[str, int] | None = None,
) -> None:
    """A headless run of the project's roles as `up` records it, written by hand: for tests
    of what only reads the record (views, status, repair, gc) without starting processes.
    `pids` gives roles a process (a live one makes the role alive to `status`)."""
    from swarmforge.config import sessionrecord
    from swarmforge.config.rolerecord import RoleRecord
    from swarmforge.config.sessionrecord import SessionRecord

    roles = [
        RoleRecord(
            name=name,
            agent="exec",
            worktree="master" if mode == "master" else name,
            path=str(project.tree(name)),
            branch=f"swarm/test/{name}",
            port=4000 + i,
            mode="batch" if mode == "batch" else "task",
            pid=(pids or {}).get(name),
        )
        for i, (name, mode) in enumerate(project.roles.items())
    ]
    record = SessionRecord(
        run_id="r1",
        project=str(project.root),
        backend="headless",
        state="running" if state == "running" else "stopped",
        started_at=times.stamp(),
        roles=roles,
    )
    sessionrecord.save(str(project.root), record)


def make_swarm(
    repo: Path,
    conf: str,
    files: dict[str, str] | None = None,
    prompts: dict[str, str] | None = None,
) -> Path:
    """A committed swarm configuration (worktree roles read what is committed)."""
    (repo / "swarmforge" / "roles").mkdir(parents=True)
    (repo / "swarmforge" / "swarmforge.conf").write_text(conf)
    (repo / "swarmforge" / "constitution.prompt").write_text("Work carefully.\n")
    for role, text in (prompts or {}).items():
        (repo / "swarmforge" / "roles" / f"{role}.prompt").write_text(text)
    for name, text in (files or {}).items():
        (repo / name).write_text(text)
        (repo / name).chmod(0o755)
    commit_all(repo)
    return repo


def commit_all(repo: Path) -> None:
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "swarm configuration")


def kick(record: sessionrecord.SessionRecord, role: str, sender: str) -> None:
    target = Path(Mailbox(record.role(role).path).path(Box.NEW))  # type: ignore[union-attr]
    name = f"50_20260101T000000Z_000001_from_{sender}_to_{role}.handoff"
    h = message.Handoff(
        [
            ("id", name[3:-8]),
            ("from", sender),
            ("to", role),
            ("priority", "50"),
            ("type", "note"),
            ("message", "start"),
        ],
        "start\n",
    )
    tmp = target / f".{name}.tmp"
    tmp.write_bytes(h.render())
    tmp.rename(target / name)


def completed(record: sessionrecord.SessionRecord, role: str) -> list[Path]:
    box = Path(Mailbox(record.role(role).path).path(Box.COMPLETED))  # type: ignore[union-attr]
    return sorted(p for p in box.rglob("*.handoff"))


def nothing_left(root: Path) -> None:
    assert tagging.tagged(str(root)) == []
    assert not is_held(str(root / RUNNER_LOCK))
    assert not is_held(Paths(str(root)).lock)
    assert not (root / RUNNER_PID).exists()
    assert not Path(Paths(str(root)).pid).exists()
    assert not is_held(lock_path(str(root)))
    assert "prunable" not in git(root, "worktree", "list", "--porcelain")


def fake_agent(directory: Path, name: str) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / name
    path.write_text(FAKE_AGENT.format(python=sys.executable))
    path.chmod(0o755)
    return directory


FAKE_AGENT = """#!{python}
import json, os, sys
# Written under another name and renamed, so a reader never sees it half written.
with open(os.path.join(os.getcwd(), ".agent-start.tmp"), "w") as f:
    json.dump({{"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ)}}, f)
os.rename(".agent-start.tmp", "agent-start.json")
for line in sys.stdin:
    with open(os.path.join(os.getcwd(), "agent-heard.txt"), "a") as f:
        f.write(line)
"""


RECORDER = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read().strip() + '\\n')"


def recorded(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def kill_session(tmux: Tmux, name: str) -> bool:
    """End session `name` on `tmux`'s server; False if there was none."""
    argv = ["tmux", "-L", tmux.socket, "kill-session", "-t", f"={name}"]
    ended = subprocess.run(argv, capture_output=True)
    return ended.returncode == 0


def in_hand(project: Project, role: str, body: str) -> None:
    """Give `role` an item in process, as `ready` leaves it."""
    name = "50_20260101T000000Z_000001_from_lead_to_coder.handoff"
    queued = project.enqueue(role, name, {"from": "lead", "to": role, "type": "note"}, body)
    target = project.box(role, Box.IN_PROCESS)
    target.mkdir(parents=True, exist_ok=True)
    queued.rename(target / name)


# Hosts of one swarm: the project's name on the message server, and its session record
# as `up` writes it when some roles run elsewhere.
PROJECT = "p1"


def with_transport(project: Project, url: str, hub: str = "/srv/git/project.git") -> None:
    toml = f'[transport]\nurl = "{url}"\nhub = "{hub}"\nproject = "{PROJECT}"\n'
    (project.root / "swarmforge").mkdir(exist_ok=True)
    (project.root / "swarmforge" / "swarmforge.toml").write_text(toml)


def place_elsewhere(project: Project, remote: dict[str, str], keep: tuple[str, ...]) -> None:
    """A session record as `up` writes it when some roles run on other hosts."""
    record = sessionrecord.load(str(project.root))
    assert record is not None
    roles = [r for r in record.roles if r.name in keep]
    sessionrecord.save(
        str(project.root), record.model_copy(update={"roles": roles, "remote": remote})
    )


def beat_of(host: str, roles: dict[str, int], sent_at: float | None = None, **more: Any) -> Any:
    from swarmforge.net.beats import HostBeat, RoleBeat

    return HostBeat(
        host=host,
        primary=more.get("primary", False),
        machine=f"{host}.example",
        pid=4242,
        sent_at=time.time() if sent_at is None else sent_at,
        run_id="r1",
        run_state="running",
        roles=[
            RoleBeat(name=n, branch=f"swarm/test/{n}", port=p, agent=more.get("agent"))
            for n, p in roles.items()
        ],
    )
