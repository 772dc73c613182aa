"""What an `up` killed half-way leaves behind, and how `up`, `gc` and `down` recover from it.

Each state is built directly (or by a hook that kills `up` at a chosen point), so the
default run is deterministic; the random kills are behind the `slow` marker.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from swarmforge import statedir
from swarmforge.config import sessionrecord
from swarmforge.errors import SwarmforgeError
from swarmforge.git import intents
from swarmforge.git.prune import prune
from swarmforge.git.removing import remove
from swarmforge.git.worktrees import create
from tests.support import VENV_BIN, git, make_swarm, nothing_left, retry_until
from tests.support import run_cli as sf

CONF = "".join(f"window {n} exec {n} task sh -c 'cat > got.txt'\n" for n in ("aw", "bw"))
OLD_RUN = "20250101T000000Z-0a0b0c"
RESCUE = "refs/swarmforge/rescue/r1/aw"


def _registered(repo: Path) -> list[str]:
    listing = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in listing if line.startswith("worktree ")]


def _branches(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()


def _outside(repo: Path) -> dict[str, bytes]:
    """Every file beside the project (in the test's own temporary directory), with content."""
    files = {}
    for dirpath, _, filenames in os.walk(repo.parent):
        if Path(dirpath) == repo or repo in Path(dirpath).parents:
            continue
        for name in filenames:
            path = Path(dirpath) / name
            files[str(path)] = path.read_bytes()
    return files


@pytest.fixture
def beside(repo: Path) -> Callable[[], None]:
    """A file beside the project; the returned check says nothing outside it changed."""
    (repo.parent / "neighbour").mkdir()
    (repo.parent / "neighbour" / "keep.txt").write_text("not the project's\n")
    before = _outside(repo)

    def unchanged() -> None:
        assert _outside(repo) == before

    return unchanged


# -- the states, built directly ----------------------------------------------------------------


def _admin(repo: Path, name: str) -> Path:
    text = (repo / ".worktrees" / name / ".git").read_text()
    return Path(text.removeprefix("gitdir:").strip())


def empty_directory(repo: Path, name: str) -> None:
    (repo / ".worktrees" / name / "sub").mkdir(parents=True)


def unregistered_checkout(repo: Path, name: str) -> None:
    """A partial checkout whose `.git` file names an admin dir that is gone."""
    tree = Path(create(str(repo), name, f"swarm/r1/{name}").path)
    shutil.rmtree(_admin(repo, name))
    (tree / "README").unlink()
    git(repo, "branch", "-D", f"swarm/r1/{name}")


def registration_without_head(repo: Path, name: str) -> None:
    """Registered, with its `.git` file, but killed before git wrote the worktree's HEAD."""
    create(str(repo), name, f"swarm/r1/{name}")
    admin = _admin(repo, name)
    (admin / "HEAD").unlink()
    (admin / "locked").write_text("initializing")


def locked_registration_without_directory(repo: Path, name: str) -> None:
    """Registered and locked by an add that died, its directory gone: git will not prune it."""
    tree = create(str(repo), name, f"swarm/r1/{name}").path
    (_admin(repo, name) / "locked").write_text("initializing")
    shutil.rmtree(tree)


def intent_with_stale_ref_lock(repo: Path, name: str) -> None:
    """A creation killed inside libgit2's branch creation: its intent and git's ref lock."""
    path = str(repo / ".worktrees" / name)
    head = git(repo, "rev-parse", "HEAD")
    intents.record(str(repo), intents.Intent(name, path, f"swarm/r1/{name}", head))
    lock = repo / ".git" / "refs" / "heads" / "swarm" / "r1" / f"{name}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(head + "\n")


STATES = [
    empty_directory,
    unregistered_checkout,
    registration_without_head,
    locked_registration_without_directory,
    intent_with_stale_ref_lock,
]


@pytest.mark.parametrize("state", STATES)
def test_create_recovers_what_an_interrupted_creation_left(
    repo: Path, beside: Callable[[], None], state: Callable[[Path, str], None]
) -> None:
    state(repo, "aw")
    tree = create(str(repo), "aw", "swarm/r1/aw")
    assert git(Path(tree.path), "symbolic-ref", "--short", "HEAD") == "swarm/r1/aw"
    assert (Path(tree.path) / "README").read_text() == "project\n"
    assert git(Path(tree.path), "status", "--porcelain") == ""
    assert _registered(repo) == [str(repo), tree.path]
    # No lock of git's left; swarmforge's own lock files lie in its state, in the git dir.
    state = Path(statedir.of(str(repo)))
    assert not [p for p in (repo / ".git").rglob("*.lock") if state not in p.parents]
    assert prune(str(repo)).cleared == ()
    beside()


@pytest.mark.parametrize(
    "state", [empty_directory, unregistered_checkout, registration_without_head]
)
def test_prune_removes_half_made_directories_and_says_so(
    repo: Path, beside: Callable[[], None], state: Callable[[Path, str], None]
) -> None:
    state(repo, "aw")
    kept = create(str(repo), "kept", "swarm/r1/kept")
    pruned = prune(str(repo))
    assert pruned.cleared == ("aw",)
    assert not (repo / ".worktrees" / "aw").exists()
    assert _registered(repo) == [str(repo), kept.path]
    assert prune(str(repo)) == type(pruned)((), (), ())
    beside()


def test_prune_forgets_a_locked_registration_whose_directory_is_gone(repo: Path) -> None:
    locked_registration_without_directory(repo, "aw")
    pruned = prune(str(repo))
    assert [w.name for w in pruned.worktrees] == ["aw"] and pruned.cleared == ()
    assert _registered(repo) == [str(repo)]
    assert "swarm/r1/aw" in _branches(repo)  # branches may hold work: always kept


@pytest.mark.parametrize(
    "state", [empty_directory, unregistered_checkout, registration_without_head]
)
def test_remove_removes_a_half_made_directory(
    repo: Path, state: Callable[[Path, str], None]
) -> None:
    state(repo, "aw")
    removal = remove(str(repo), "aw", rescue_ref=RESCUE)
    assert removal.removed and removal.rescued is None
    assert not (repo / ".worktrees" / "aw").exists()
    assert _registered(repo) == [str(repo)]


# -- what may be someone's work is refused, named, and left alone --------------------------


def users_file(repo: Path, name: str) -> Path:
    (repo / ".worktrees" / name).mkdir(parents=True)
    return _write(repo / ".worktrees" / name / "notes.txt")


def changed_checkout(repo: Path, name: str) -> Path:
    unregistered_checkout(repo, name)
    return _write(repo / ".worktrees" / name / "README")


def checkout_with_a_mailbox_item(repo: Path, name: str) -> Path:
    unregistered_checkout(repo, name)
    return _write(repo / ".worktrees" / name / ".swarmforge" / "handoffs" / "new" / "item")


def nested_repository(repo: Path, name: str) -> Path:
    (repo / ".worktrees" / name).mkdir(parents=True)
    git(repo / ".worktrees" / name, "init", "-q")
    return _write(repo / ".worktrees" / name / "README")


def _write(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("someone's work\n")
    return path


@pytest.mark.parametrize("state", [users_file, changed_checkout, checkout_with_a_mailbox_item])
def test_a_directory_that_may_hold_work_is_refused_and_kept(
    repo: Path, beside: Callable[[], None], state: Callable[[Path, str], Path]
) -> None:
    work = state(repo, "aw")
    path = repo / ".worktrees" / "aw"
    for attempt in (
        lambda: create(str(repo), "aw", "swarm/r1/aw"),
        lambda: remove(str(repo), "aw", rescue_ref=RESCUE),
    ):
        with pytest.raises(SwarmforgeError) as caught:
            attempt()
        assert str(path) in caught.value.message and "someone's work" in caught.value.message
        assert caught.value.hint == f"Move what you need out of it, then run: rm -r {path}"
    assert prune(str(repo)).cleared == ()
    assert work.read_text() == "someone's work\n"
    assert "swarm/r1/aw" not in _branches(repo)
    beside()


def test_a_repository_of_its_own_is_refused_and_kept(repo: Path) -> None:
    work = nested_repository(repo, "aw")
    path = repo / ".worktrees" / "aw"
    with pytest.raises(SwarmforgeError, match="another repository") as caught:
        create(str(repo), "aw", "swarm/r1/aw")
    assert str(path) in caught.value.message
    with pytest.raises(SwarmforgeError, match=f"{path}: it is not a worktree") as caught:
        remove(str(repo), "aw", rescue_ref=RESCUE)
    assert caught.value.hint.endswith(f"rm -rf {path}")
    assert prune(str(repo)).cleared == ()
    assert work.read_text() == "someone's work\n"


def test_a_worktree_on_another_branch_is_refused_with_the_command_that_frees_it(
    repo: Path,
) -> None:
    tree = Path(create(str(repo), "aw", "swarm/r0/aw").path)
    with pytest.raises(SwarmforgeError) as caught:
        create(str(repo), "aw", "swarm/r1/aw")
    assert "'swarm/r0/aw'" in caught.value.message and "'swarm/r1/aw'" in caught.value.message
    assert caught.value.hint == f"If it holds nothing you need: git worktree remove {tree}"
    assert git(tree, "symbolic-ref", "--short", "HEAD") == "swarm/r0/aw"


# -- up, gc and down on a real project ----------------------------------------------------------

KILL_HOOK = """#!/bin/sh
# Kills `up` (the parent of this hook's git) while it makes worktree $KILL_AT.
if [ -n "$KILL_AT" ] && [ "$(basename "$PWD")" = "$KILL_AT" ]; then
    echo $PPID > "{git_pid}"
    kill -9 "$UP_PID"
fi
exit 0
"""


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _up_killed_while_making(repo: Path, name: str) -> None:
    git_pid = repo / ".git" / "killed-git.pid"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(KILL_HOOK.format(git_pid=git_pid))
    hook.chmod(0o755)
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent", "KILL_AT": name}
    # `exec` keeps the shell's pid, so the hook knows which process is `up`.
    argv = ["/bin/sh", "-c", 'UP_PID=$$ exec "$0" up --backend headless', f"{VENV_BIN}/swarmforge"]
    killed = subprocess.run(argv, cwd=repo, env=env, capture_output=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    retry_until(lambda: _gone(int(git_pid.read_text())))  # its git finishes on its own
    hook.unlink()


def test_an_up_killed_while_making_worktrees_is_resumed_by_the_next_up(
    repo: Path, beside: Callable[[], None]
) -> None:
    make_swarm(repo, CONF)
    _up_killed_while_making(repo, "bw")
    record = sessionrecord.load(str(repo))
    assert record is not None and record.state == "stopped"  # recorded before any worktree
    r = sf("up", "--backend", "headless", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert f"resuming run {record.run_id}" in r.stderr
    for name in ("aw", "bw"):
        head = git(repo / ".worktrees" / name, "symbolic-ref", "--short", "HEAD")
        assert head == f"swarm/{record.run_id}/{name}"
    _purge_leaves_nothing(repo, 2)
    beside()


def test_up_resumes_the_run_of_worktrees_an_earlier_up_never_recorded(
    repo: Path, beside: Callable[[], None]
) -> None:
    make_swarm(repo, CONF)
    for name in ("aw", "bw"):  # what an `up` that recorded its run last left when killed
        create(str(repo), name, f"swarm/{OLD_RUN}/{name}")
    r = sf("up", "--backend", "headless", cwd=repo)
    assert r.returncode == 0, r.stderr
    record = sessionrecord.load(str(repo))
    assert record is not None and record.run_id == OLD_RUN
    _purge_leaves_nothing(repo, 2)
    assert {f"swarm/{OLD_RUN}/aw", f"swarm/{OLD_RUN}/bw"} <= set(_branches(repo))
    beside()


def _purge_leaves_nothing(repo: Path, count: int) -> None:
    r = sf("down", "--purge", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith(f"stopped; removed {count} worktree(s)\n")
    assert list((repo / ".worktrees").iterdir()) == []
    nothing_left(repo)
    assert _registered(repo) == [str(repo)]


def test_down_purge_reports_only_the_worktrees_it_removed(
    repo: Path, beside: Callable[[], None]
) -> None:
    make_swarm(repo, CONF)
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    assert sf("down", cwd=repo).returncode == 0
    git(repo, "worktree", "remove", str(repo / ".worktrees" / "aw"))  # already gone
    unregistered = _admin(repo, "bw")
    shutil.rmtree(unregistered)  # bw: a checkout no longer registered
    r = sf("down", "--purge", "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["removed"] == ["bw"]
    assert list((repo / ".worktrees").iterdir()) == [] and _registered(repo) == [str(repo)]
    nothing_left(repo)
    beside()


def test_gc_removes_half_made_directories_keeps_work_and_says_which(
    repo: Path, beside: Callable[[], None]
) -> None:
    make_swarm(repo, CONF)
    empty_directory(repo, "aw")
    unregistered_checkout(repo, "bw")
    work = users_file(repo, "cw")
    r = sf("gc", "--json", cwd=repo)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert (report["cleared"], report["worktrees"], report["rolled_back"]) == (["aw", "bw"], [], [])
    assert sorted(p.name for p in (repo / ".worktrees").iterdir()) == ["cw"]
    assert work.read_text() == "someone's work\n"
    r = sf("gc", cwd=repo)
    assert r.returncode == 0 and r.stdout == "nothing to clean up\n"
    beside()


def test_up_and_down_refuse_a_directory_holding_work_naming_it_and_the_fix(
    repo: Path, beside: Callable[[], None]
) -> None:
    make_swarm(repo, CONF)
    work = users_file(repo, "aw")
    path = repo / ".worktrees" / "aw"
    for command in (("up", "--backend", "headless"), ("down", "--purge")):
        r = sf(*command, cwd=repo)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert f"{path} is not a worktree" in r.stderr and f"rm -r {path}" in r.stderr
    assert work.read_text() == "someone's work\n"
    work.unlink()
    r = sf("up", "--backend", "headless", cwd=repo)
    assert r.returncode == 0, r.stderr
    _purge_leaves_nothing(repo, 2)
    beside()


@pytest.mark.slow
def test_up_killed_at_random_instants_is_always_recovered(
    repo: Path, beside: Callable[[], None]
) -> None:
    make_swarm(repo, CONF)
    rng = random.Random(11)
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"}
    for _ in range(8):
        up = subprocess.Popen(
            [f"{VENV_BIN}/swarmforge", "up", "--backend", "headless"],
            cwd=repo,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(rng.uniform(0.0, 1.0))
        os.killpg(up.pid, signal.SIGKILL)  # `up` and its git children, wherever they are
        up.wait()
        r = sf("up", "--backend", "headless", cwd=repo)
        assert r.returncode == 0, r.stderr
        _purge_leaves_nothing(repo, 2)
    beside()
