"""`swarmforge doctor`: one ok/warn/FAIL line per check, exit 1 on a FAIL."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import psutil
import pytest

from swarmforge import projectroot
from swarmforge.agents.seed import seed_home
from swarmforge.config import sessionrecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.doctor.check import Check
from swarmforge.doctor.repository import check_repository
from swarmforge.doctor.runstate import check_daemon, check_run
from swarmforge.doctor.tools import check_git, check_python
from tests.realagents import agents_path, without_bwrap
from tests.support import SWARMFORGE, VENV_BIN, git


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    """A directory of stand-in agent executables, put first on the command's PATH."""
    directory = tmp_path / "fake-bin"
    directory.mkdir()
    for name in ("codex", "claude"):
        script = directory / name
        script.write_text("#!/bin/sh\nexit 0\n")
        script.chmod(0o755)
    return directory


def sf(
    *args: str, cwd: Path, first_on_path: Path | None = None, home: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    path = f"{VENV_BIN}:/usr/bin:/bin"
    env = {"PATH": f"{first_on_path}:{path}" if first_on_path else path}
    # The agents' own files are looked up from HOME: never this machine's.
    env.update(home or {"HOME": "/nonexistent"})
    # Test infrastructure only: lets coverage follow the command into its interpreter.
    env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    return subprocess.run(
        [SWARMFORGE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def seeded(tmp_path: Path, root: Path) -> dict[str, str]:
    """The environment of a home where claude and codex would start in `root` unasked."""
    return seed_home(str(tmp_path / "home"), str(root), api_key="sk-test").env()


def checks(r: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    """doctor --json output by check name."""
    return {c["check"]: c for c in json.loads(r.stdout)}


def init(root: Path, pack: str = "two-pack") -> Path:
    r = sf("init", "--pack", pack, str(root), cwd=root.parent)
    assert r.returncode == 0, r.stderr
    return root


def set_conf(root: Path, text: str) -> None:
    (root / "swarmforge" / "swarmforge.conf").write_text(text)


def test_a_fresh_project_with_its_agents_on_path_is_ok(repo: Path, agents: Path) -> None:
    init(repo, "four-pack")
    r = sf("doctor", cwd=repo, first_on_path=agents, home=seeded(repo.parent, repo))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    for role in ("specifier", "coder", "refactorer", "architect"):
        line = next(x for x in lines if x.split()[:3] == ["ok", "role", role])
        assert str(agents / "codex") in line
    for name in ("python", "git", "config", "codex", "prompts", "repository", "daemon", "run"):
        assert any(x.split()[:2] == ["ok", name] for x in lines), name


def test_codex_roles_outside_their_sandbox_are_warned_of_every_time(
    repo: Path, agents: Path
) -> None:
    init(repo)
    set_conf(
        repo,
        "window coder codex master\n"
        "window cleaner codex cleaner --dangerously-bypass-approvals-and-sandbox\n"
        "window reviewer codex reviewer\n"
        "window tester codex tester\n",
    )
    (repo / "swarmforge" / "swarmforge.toml").write_text("[roles.reviewer]\nsandbox = false\n")
    home = seeded(repo.parent, repo)
    for _ in range(2):
        r = sf("doctor", "--json", cwd=repo, first_on_path=agents, home=home)
        found = checks(r)
        assert found["role cleaner sandbox"]["status"] == "warn"
        assert (
            "--dangerously-bypass-approvals-and-sandbox" in found["role cleaner sandbox"]["detail"]
        )
        assert found["role reviewer sandbox"]["detail"] == (
            "runs outside codex's sandbox (sandbox = false)"
        )
        # In its sandbox, in the main checkout or in its own worktree: nothing to warn of.
        assert "role coder sandbox" not in found and "role tester sandbox" not in found


def test_claude_roles_outside_their_sandbox_or_without_its_tools_are_warned_of(
    repo: Path, agents: Path, tmp_path: Path
) -> None:
    init(repo)
    set_conf(
        repo,
        "window coder claude master\n"
        "window cleaner claude cleaner --dangerously-skip-permissions\n"
        "window reviewer claude reviewer --permission-mode bypassPermissions\n"
        "window tester claude tester\n",
    )
    (repo / "swarmforge" / "swarmforge.toml").write_text("[roles.tester]\nsandbox = false\n")
    home = seeded(repo.parent, repo)
    found = checks(sf("doctor", "--json", cwd=repo, first_on_path=agents, home=home))
    assert "--dangerously-skip-permissions" in found["role cleaner sandbox"]["detail"]
    assert "bypassPermissions" in found["role reviewer sandbox"]["detail"]
    assert found["role tester sandbox"]["detail"] == (
        "runs outside claude's sandbox (sandbox = false)"
    )
    # claude's sandbox lets a role in the main checkout commit: nothing to warn of.
    assert "role coder sandbox" not in found
    if shutil.which("bwrap") and shutil.which("socat"):
        assert found["claude sandbox"]["status"] == "ok", found["claude sandbox"]
    # On a machine without bubblewrap, claude would ask before every command.
    bare = {**home, "PATH": f"{agents}:{VENV_BIN}:{without_bwrap(tmp_path / 'nobwrap')}"}
    found = checks(sf("doctor", "--json", cwd=repo, home=bare))
    assert found["claude sandbox"]["status"] == "warn"
    assert "bwrap" in found["claude sandbox"]["detail"]
    assert "apt-get install bubblewrap socat" in found["claude sandbox"]["fix"]


@pytest.mark.slow
def test_the_probe_proves_each_agents_sandbox_and_touches_nothing_of_the_project(
    repo: Path, tmp_path: Path
) -> None:
    init(repo)
    set_conf(repo, "window coder claude coder\nwindow cleaner codex cleaner\n")
    status = git(repo, "status", "--porcelain")
    path = f"{agents_path()}{VENV_BIN}:/usr/bin:/bin"
    r = sf("doctor", "--probe", "--json", cwd=repo, home={"HOME": "/nonexistent", "PATH": path})
    found = checks(r)
    for agent in ("claude", "codex"):
        assert found[f"{agent} sandbox probe"]["status"] == "ok", found[f"{agent} sandbox probe"]
    assert "probing claude's sandbox" in r.stderr
    # Without bubblewrap claude's sandbox cannot start: its commit is refused, and the
    # fix says what to install. codex brings a sandbox of its own.
    bare = f"{agents_path()}{VENV_BIN}:{without_bwrap(tmp_path / 'nobwrap')}"
    r = sf("doctor", "--probe", "--json", cwd=repo, home={"HOME": "/nonexistent", "PATH": bare})
    found = checks(r)
    assert r.returncode == 1
    assert found["claude sandbox probe"]["status"] == "FAIL"
    assert "bubblewrap" in found["claude sandbox probe"]["fix"]
    assert found["codex sandbox probe"]["status"] == "ok"
    assert git(repo, "status", "--porcelain") == status
    assert not (repo / ".worktrees").exists()
    # codex's file helper, which outlives codex, is ended with the probe.
    assert [p.pid for p in psutil.process_iter() if _probe_helper(p)] == []


def _probe_helper(process: psutil.Process) -> bool:
    try:
        line = " ".join(process.cmdline())
    except psutil.Error:
        return False
    return "swarmforge-probe-" in line and "--codex-run-as-fs-helper" in line


def test_a_missing_agent_fails_naming_its_role(repo: Path, agents: Path) -> None:
    init(repo)
    set_conf(repo, "window coder codex master\nwindow cleaner sf-absent-agent cleaner batch\n")
    r = sf("doctor", cwd=repo, first_on_path=agents)
    assert r.returncode == 1
    fail = next(x for x in r.stdout.splitlines() if x.startswith("FAIL"))
    assert "cleaner" in fail and "sf-absent-agent" in fail and "swarmforge.conf" in fail
    found = checks(sf("doctor", "--json", cwd=repo, first_on_path=agents))
    assert found["role coder"]["status"] == "ok"
    assert found["role cleaner"]["status"] == "FAIL" and found["role cleaner"]["fix"]


@pytest.mark.slow
def test_an_exec_role_command_is_found_from_its_worktree(repo: Path, agents: Path) -> None:
    init(repo)
    set_conf(repo, "window coder codex master\nwindow tests exec tests batch ./run-tests.sh\n")
    found = checks(sf("doctor", "--json", "--project", str(repo), cwd=repo.parent))
    assert found["role tests"]["status"] == "FAIL" and "'tests'" in found["role tests"]["detail"]
    # Before `up` makes the worktree, the project's own checkout stands in for it.
    script = repo / "run-tests.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    home = seeded(repo.parent, repo)
    r = sf(
        "doctor", "--json", "--project", str(repo), cwd=repo.parent, first_on_path=agents, home=home
    )
    assert r.returncode == 0, r.stdout
    assert checks(r)["role tests"]["detail"].endswith(f"{repo.name}/./run-tests.sh")


def test_doctor_json_is_a_list_of_checks(repo: Path, agents: Path) -> None:
    init(repo)
    r = sf("doctor", "--json", cwd=repo, first_on_path=agents, home=seeded(repo.parent, repo))
    assert r.returncode == 0, r.stdout
    found = json.loads(r.stdout)
    assert isinstance(found, list) and found
    for check in found:
        assert set(check) == {"check", "status", "detail", "fix"}
        assert check["status"] in ("ok", "warn", "FAIL")
        assert check["status"] == "ok" or check["fix"]
    names = [c["check"] for c in found]
    assert names[:4] == ["python", "git", "tmux", "config"]
    assert {"role coder", "role cleaner", "codex", "prompts", "repository", "daemon", "run"} <= set(
        names
    )


def test_doctor_outside_any_project_warns_but_does_not_fail(tmp_path: Path) -> None:
    empty = tmp_path / "nowhere"
    empty.mkdir()
    r = sf("doctor", cwd=empty)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr == ""
    assert r.stdout.splitlines()[0] == f"no project found from {empty}"
    config = next(x for x in r.stdout.splitlines() if " config " in x)
    assert config.startswith("warn") and "no swarmforge/swarmforge.conf" in config
    assert "swarmforge init" in config
    assert checks(sf("doctor", "--json", cwd=empty))["repository"]["status"] == "warn"


def test_doctor_fails_in_a_project_that_up_cannot_start(repo: Path, tmp_path: Path) -> None:
    r = sf("doctor", cwd=repo)  # a git checkout with no swarmforge.conf
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == f"project {repo}"
    config = next(x for x in r.stdout.splitlines() if " config " in x)
    assert config.startswith("FAIL") and "no swarmforge/swarmforge.conf" in config
    assert "`swarmforge up` cannot start" in config and "swarmforge init" in config
    named = tmp_path / "named"
    named.mkdir()
    found = sf("doctor", "--json", "--project", str(named), cwd=tmp_path)
    assert found.returncode == 1 and checks(found)["config"]["status"] == "FAIL"


def test_doctor_names_a_missing_project_directory(tmp_path: Path) -> None:
    r = sf("doctor", "--project", str(tmp_path / "gone"), cwd=tmp_path)
    assert r.returncode == 1 and "gone" in r.stderr


def test_missing_prompts_and_a_broken_config_fail(tmp_path: Path, agents: Path) -> None:
    root = init(tmp_path / "p")
    (root / "swarmforge" / "roles" / "cleaner.prompt").unlink()
    found = checks(sf("doctor", "--json", cwd=root, first_on_path=agents))
    assert found["prompts"]["status"] == "FAIL"
    assert "swarmforge/roles/cleaner.prompt" in found["prompts"]["detail"]
    set_conf(root, "window coder codex master\nbogus line here\n")
    found = checks(sf("doctor", "--json", cwd=root / "swarmforge", first_on_path=agents))
    assert found["config"]["status"] == "FAIL" and "line 2" in found["config"]["detail"]


def test_a_repository_without_a_commit_is_a_warning(tmp_path: Path) -> None:
    root = init(tmp_path / "p")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    check = check_repository(str(root))
    assert check.status == "warn" and "`swarmforge up`" in check.fix


def test_a_stale_daemon_pid_file_is_a_warning_pointing_at_gc(tmp_path: Path) -> None:
    pid_file = tmp_path / ".swarmforge" / "daemon" / "handoffd.pid"
    pid_file.parent.mkdir(parents=True)
    pid_file.write_text("4194000\n")
    check = check_daemon(str(tmp_path))
    assert check.status == "warn" and "4194000" in check.detail
    assert "swarmforge gc" in check.fix
    pid_file.unlink()
    assert check_daemon(str(tmp_path)) == Check("daemon", "ok", "not running")


def _record(root: Path, state: str, present: bool) -> SessionRecord:
    tree = root / ".worktrees" / "coder"
    if present:
        tree.mkdir(parents=True)
    role = RoleRecord(
        name="coder",
        agent="codex",
        worktree="coder",
        path=str(tree),
        branch="swarm/r1/coder",
        port=4321,
        mode="task",
    )
    return SessionRecord.model_validate(
        {
            "run_id": "r1",
            "project": str(root),
            "backend": "headless",
            "state": state,
            "started_at": "2024-01-01T00:00:00Z",
            "roles": [role.model_dump()],
        }
    )


def test_the_run_record_state_and_worktrees(tmp_path: Path) -> None:
    runrecord_dir = tmp_path / ".swarmforge"
    runrecord_dir.mkdir()
    assert [c.status for c in check_run(str(tmp_path))] == ["ok"]
    sessionrecord.save(str(tmp_path), _record(tmp_path, "stopped", present=True))
    run, trees = check_run(str(tmp_path))
    assert (run.status, trees.status) == ("ok", "ok") and "stopped" in run.detail
    sessionrecord.save(str(tmp_path), _record(tmp_path / "other", "running", present=False))
    run, trees = check_run(str(tmp_path))
    assert run.status == "warn" and "swarmforge gc" in run.fix
    assert trees.status == "warn" and "coder" in trees.detail
    (runrecord_dir / "run.json").write_text("{not json")
    (broken,) = check_run(str(tmp_path))
    assert broken.status == "FAIL" and "run.json" in broken.detail


def test_python_and_tool_versions_are_compared_to_the_minimums() -> None:
    assert check_python((3, 10, 9)).status == "FAIL"
    assert check_python().status == "ok"
    assert check_git().detail.startswith("git version")


def test_doctor_finds_the_project_from_inside_it(tmp_path: Path) -> None:
    root = init(tmp_path / "p")
    everywhere = (*projectroot.ANYWHERE, projectroot.HERE)
    assert projectroot.locate(str(root / "swarmforge" / "roles"), everywhere) == str(root)
    assert projectroot.locate(str(tmp_path), everywhere) == str(tmp_path)
    assert projectroot.locate(str(tmp_path), projectroot.ANYWHERE) is None
    assert projectroot.locate(str(root), projectroot.ANYWHERE) == str(root)
