"""A role's new worktree gets the project's git-ignored files and runs its setup first."""

from __future__ import annotations

import json
import shutil
import stat
import time
from pathlib import Path

import pytest

from swarmforge import tagging
from swarmforge.config import sessionrecord
from swarmforge.config.startsettings import BootstrapSettings
from swarmforge.swarm.bootstrap import files
from tests.support import make_swarm, nothing_left, retry_until
from tests.support import run_cli as sf

IDLE = "sh -c 'cat > /dev/null'"


def settings(repo: Path, text: str) -> None:
    """swarmforge.toml in the main checkout, where `up` reads it."""
    (repo / "swarmforge" / "swarmforge.toml").write_text(text)


def project(repo: Path, roles: list[str], toml: str) -> Path:
    """A committed swarm of idle exec roles, each in its own worktree, with a git-ignored
    `.env`, `config/dev.local.yml`, `cache/` (holding a symlink) and `node_modules/`."""
    (repo / ".gitignore").write_text(".env\n*.local.yml\ncache/\nnode_modules/\n")
    conf = "".join(f"window {name} exec {name} task {IDLE}\n" for name in roles)
    make_swarm(repo, conf)
    (repo / ".env").write_text("SECRET=1\n")
    (repo / ".env").chmod(0o600)
    (repo / "config").mkdir()
    (repo / "config" / "dev.local.yml").write_text("db: local\n")
    (repo / "cache").mkdir()
    (repo / "cache" / "data").write_text("cached\n")
    (repo / "cache" / "link").symlink_to("data")
    (repo / "node_modules" / "left-pad").mkdir(parents=True)
    (repo / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    settings(repo, toml)
    return repo


def worktree(repo: Path, role: str) -> Path:
    record = sessionrecord.load(str(repo))
    assert record is not None
    found = record.role(role)
    assert found is not None
    return Path(found.path)


def log_of(repo: Path, role: str) -> str:
    return (repo / ".swarmforge" / "logs" / f"{role}.log").read_text()


def role_processes(repo: Path, role: str) -> list[int]:
    """The run's processes started for `role` (they carry its name in their environment)."""
    found = []
    for process in tagging.tagged(str(repo)):
        try:
            if process.environ().get("SWARMFORGE_ROLE") == role:
                found.append(process.pid)
        except Exception:
            continue
    return found


def role_json(repo: Path, role: str) -> dict[str, object]:
    state = json.loads(sf("status", "--json", cwd=repo).stdout)
    return next(r for r in state["roles"] if r["role"] == role)


@pytest.mark.slow
def test_ignored_files_are_copied_and_linked_and_setup_runs_in_order(repo: Path) -> None:
    toml = """
[bootstrap]
copy = [".env", "config/*.local.yml", "cache", "README"]
symlink = ["node_modules"]
setup = ["echo one >> order.txt; echo said-one", "echo two >> order.txt; echo $PORT > port.txt"]
"""
    project(repo, ["web"], toml)
    (repo / "README").write_text("changed in the main checkout\n")  # tracked: never copied
    before = sorted(p.name for p in repo.parent.iterdir())
    r = sf("up", "--backend", "headless", cwd=repo)
    try:
        assert r.returncode == 0, r.stderr
        tree = worktree(repo, "web")
        assert (tree / ".env").read_text() == "SECRET=1\n"
        assert stat.S_IMODE((tree / ".env").stat().st_mode) == 0o600
        assert (tree / "config" / "dev.local.yml").read_text() == "db: local\n"
        assert (tree / "cache" / "link").is_symlink()
        assert (tree / "cache" / "link").readlink() == Path("data")
        assert (tree / "node_modules").is_symlink()
        assert (tree / "node_modules").readlink() == repo / "node_modules"
        assert (tree / "README").read_text() == "project\n"
        assert (tree / "order.txt").read_text() == "one\ntwo\n"
        port = sessionrecord.load(str(repo)).role("web").port  # type: ignore[union-attr]
        assert (tree / "port.txt").read_text() == f"{port}\n"
        log = log_of(repo, "web")
        assert "skipped README: git tracks it" in log
        assert log.index("$ echo one") < log.index("said-one") < log.index("$ echo two")
        assert role_json(repo, "web")["setup_failed"] is None
        # A resumed role whose worktree exists is not bootstrapped again.
        assert sf("down", cwd=repo).returncode == 0
        assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
        assert (tree / "order.txt").read_text() == "one\ntwo\n"
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)
    assert sorted(p.name for p in repo.parent.iterdir()) == before


@pytest.mark.slow
def test_a_failed_setup_holds_back_only_its_role_until_an_up_after_the_fix(repo: Path) -> None:
    toml = """
[bootstrap]
setup = ["echo ok >> setup-runs.txt"]

[roles.bad.bootstrap]
setup = ["echo about to fail; echo boom >&2; exit 3", "echo never > never.txt"]
"""
    project(repo, ["good", "bad"], toml)
    r = sf("up", "--backend", "headless", cwd=repo)
    try:
        assert r.returncode == 1
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("role bad not started: setup command `echo about to fail;")
        log = (repo / ".swarmforge" / "logs" / "bad.log").resolve()  # where the state lies
        assert "exited 3" in last and str(log) in last
        assert "role bad setup-failed" in r.stderr  # said while it happened too
        assert not (worktree(repo, "bad") / "never.txt").exists()
        retry_until(lambda: role_json(repo, "good")["alive"] is True)
        assert role_processes(repo, "good")
        assert role_processes(repo, "bad") == []
        bad = role_json(repo, "bad")
        assert bad["alive"] is False
        failed = bad["setup_failed"]
        assert isinstance(failed, dict)
        assert (failed["exit_code"], failed["timed_out"]) == (3, False)
        assert failed["last_lines"] == ["about to fail", "boom"]
        shown = sf("status", cwd=repo).stdout
        assert "setup-failed: setup command `echo about to fail;" in shown and "| boom" in shown
        # Fixed, then up again: the role's setup runs again and it starts.
        assert sf("down", cwd=repo).returncode == 0
        settings(repo, toml.replace("exit 3", "true"))
        r = sf("up", "--backend", "headless", cwd=repo)
        assert r.returncode == 0, r.stderr
        assert (worktree(repo, "bad") / "never.txt").read_text() == "never\n"
        assert (worktree(repo, "good") / "setup-runs.txt").read_text() == "ok\n"
        assert not (repo / ".swarmforge" / "setup-failed" / "bad.json").exists()
        retry_until(lambda: role_json(repo, "bad")["alive"] is True)
        assert role_json(repo, "bad")["setup_failed"] is None
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


@pytest.mark.slow
def test_a_setup_out_of_time_is_killed_with_its_process_group(repo: Path) -> None:
    toml = """
[bootstrap]
setup = ["sleep 30 & sleep 31"]
setup_timeout = "1s"
"""
    project(repo, ["slow"], toml)
    began = time.monotonic()
    r = sf("up", "--backend", "headless", cwd=repo)
    try:
        assert time.monotonic() - began < 15
        assert r.returncode == 1
        assert "setup command `sleep 30 & sleep 31` timed out after 1s" in r.stderr
        failed = role_json(repo, "slow")["setup_failed"]
        assert isinstance(failed, dict)
        assert (failed["exit_code"], failed["timed_out"]) == (None, True)
        assert role_processes(repo, "slow") == []  # both sleeps ended, and no agent
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_a_role_override_of_setup_skips_it_for_that_role(repo: Path) -> None:
    toml = """
[bootstrap]
copy = [".env"]
setup = ["echo ran > ran.txt"]

[roles.qa.bootstrap]
setup = []
"""
    project(repo, ["coder", "qa"], toml)
    r = sf("up", "--backend", "headless", cwd=repo)
    try:
        assert r.returncode == 0, r.stderr
        assert (worktree(repo, "coder") / "ran.txt").exists()
        assert not (worktree(repo, "qa") / "ran.txt").exists()
        assert (worktree(repo, "qa") / ".env").exists()  # the keys it does not give are kept
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_bad_bootstrap_settings_name_the_file_and_the_key(repo: Path) -> None:
    project(repo, ["qa"], "")
    for toml, key in (
        ('[bootstrap]\ncopy = ["../outside"]\n', "bootstrap.copy"),
        ('[bootstrap]\nsymlink = ["/etc"]\n', "bootstrap.symlink"),
        ('[bootstrap]\nsetup = "make"\n', "bootstrap.setup"),
        ('[roles.qa.bootstrap]\nsetup_timeout = "soon"\n', "roles.qa.bootstrap.setup_timeout"),
        ("[bootstrap]\nlink = []\n", "bootstrap.link"),
    ):
        settings(repo, toml)
        r = sf("up", "--backend", "headless", cwd=repo)
        assert r.returncode != 0
        assert "swarmforge.toml" in r.stderr and key in r.stderr, r.stderr
        assert sessionrecord.load(str(repo)) is None
    assert not (repo / ".worktrees").exists()


@pytest.mark.slow
def test_each_worktree_gets_its_own_env_and_shares_node_modules(repo: Path) -> None:
    project(repo, ["web", "api"], '[bootstrap]\ncopy = [".env"]\nsymlink = ["node_modules"]\n')
    r = sf("up", "--backend", "headless", cwd=repo)
    try:
        assert r.returncode == 0, r.stderr
        web, api = worktree(repo, "web"), worktree(repo, "api")
        for tree in (web, api):
            assert (tree / ".env").read_text() == "SECRET=1\n"
            assert (tree / "node_modules").readlink() == repo / "node_modules"
        # A copy is the worktree's own: editing it changes neither the other nor the source.
        (web / ".env").write_text("SECRET=web\n")
        assert (api / ".env").read_text() == "SECRET=1\n"
        assert (repo / ".env").read_text() == "SECRET=1\n"
    finally:
        sf("down", cwd=repo)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["headless", "tmux"])
def test_up_on_a_running_swarm_sets_up_a_failed_role_again_and_starts_it(
    repo: Path, backend: str
) -> None:
    if backend == "tmux" and shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    toml = '[roles.bad.bootstrap]\nsetup = ["test -e ../../fixed"]\n'
    project(repo, ["good", "bad"], toml)
    r = sf("up", "--backend", backend, cwd=repo)
    try:
        assert r.returncode == 1 and "role bad not started" in r.stderr
        retry_until(lambda: role_json(repo, "good")["alive"] is True)
        good = role_processes(repo, "good")
        assert good and role_processes(repo, "bad") == []
        (repo / "fixed").write_text("")
        r = sf("up", cwd=repo)
        assert r.returncode == 0, r.stderr
        assert "already running" in r.stdout and "setting up again: bad" in r.stderr
        assert not (repo / ".swarmforge" / "setup-failed" / "bad.json").exists()
        retry_until(lambda: role_json(repo, "bad")["alive"] is True)
        assert role_processes(repo, "good") == good  # the running role was left alone
    finally:
        sf("down", cwd=repo)
    nothing_left(repo)


def test_a_path_beyond_a_symbolic_link_is_skipped_alone_and_says_why(
    repo: Path, tmp_path: Path
) -> None:
    (repo / ".gitignore").write_text(".env\nvendored\n")
    (repo / ".env").write_text("SECRET=1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "lib.js").write_text("x\n")
    (repo / "vendored").symlink_to(elsewhere)
    tree = tmp_path / "tree"
    tree.mkdir()
    said: list[str] = []
    wanted = BootstrapSettings.model_validate({"copy": [".env", "vendored/*"]})
    files.place(str(repo), str(tree), wanted, said.append)
    assert (tree / ".env").read_text() == "SECRET=1\n"
    assert said == [
        "skipped vendored/lib.js: it lies beyond the symbolic link vendored",
        "copied .env",
    ]
