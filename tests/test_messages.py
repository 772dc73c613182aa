"""What the command says when there is nothing to act on, or an argument makes no sense."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import git, run_cli

INTERNAL = ("role-loop", "supervise", "pane", "run-worker")


def test_an_unknown_command_lists_only_the_public_ones(tmp_path: Path) -> None:
    r = run_cli("bogus", cwd=tmp_path)
    assert r.returncode == 2 and "invalid choice: 'bogus'" in r.stderr
    assert "'up'" in r.stderr and "'doctor'" in r.stderr
    helped = run_cli("--help", cwd=tmp_path)
    for name in INTERNAL:
        assert f"'{name}'" not in r.stderr and name not in helped.stdout


def test_the_internal_entry_points_still_run(tmp_path: Path) -> None:
    r = run_cli("supervise", "--project", str(tmp_path / "gone"), cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, f"--project {tmp_path / 'gone'}: no such directory.\n")
    assert run_cli("run-worker", "--help", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("branch", ["", "   "])
def test_port_of_an_empty_branch_is_an_error(branch: str, tmp_path: Path) -> None:
    r = run_cli("port", branch, cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "port: the branch name is empty.\n")


def test_runs_list_without_runs_says_so(tmp_path: Path) -> None:
    r = run_cli("runs", "list", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout == f"no planned run in {tmp_path} yet: `swarmforge run SPEC` starts one\n"
    assert json.loads(run_cli("runs", "list", "--json", cwd=tmp_path).stdout) == []


def test_status_and_down_where_no_swarm_ever_ran(tmp_path: Path) -> None:
    (tmp_path / "swarmforge").mkdir()
    (tmp_path / "swarmforge" / "swarmforge.conf").write_text("window a exec a task true\n")
    status = run_cli("status", cwd=tmp_path)
    assert (status.returncode, status.stdout) == (
        0,
        "no swarm in this project (daemon not running): `swarmforge up` starts one\n",
    )
    down = run_cli("down", cwd=tmp_path)
    assert (down.returncode, down.stdout) == (0, "no swarm was running in this project\n")


def test_up_says_it_ignored_a_backend_other_than_the_running_swarms(repo: Path) -> None:
    (repo / "swarmforge").mkdir()
    (repo / "swarmforge" / "swarmforge.conf").write_text("window solo exec solo task true\n")
    (repo / "swarmforge" / "constitution.prompt").write_text("Work carefully.\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "swarm configuration")
    try:
        first = run_cli("up", "--backend", "headless", cwd=repo)
        assert first.returncode == 0 and "ignored" not in first.stderr
        # Said on stderr even with --json, where the progress lines are left out.
        again = run_cli("up", "--backend", "tmux", "--json", cwd=repo)
        assert again.returncode == 0 and json.loads(again.stdout)["already_running"] is True
        assert again.stderr == (
            "ignored --backend tmux: the swarm is already running with the headless backend; "
            "`swarmforge down` first to switch\n"
        )
    finally:
        assert run_cli("down", cwd=repo).returncode == 0
