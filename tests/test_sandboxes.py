"""Agents work in their own sandboxes, fitted by swarmforge to each role's worktree.

Started as a user starts them (the agents' one-time set-up, then `up`), with the real
claude and codex CLIs offline against the scripted model, with and without Debian's
bubblewrap: a role commits, asks for its next item and hands over with no extra
arguments and no approval prompt, and what it writes outside its worktree (the main
checkout, another role's worktree, the home directory) fails and changes nothing.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import psutil
import pytest

from swarmforge.agents.claude.command import sandbox_settings
from swarmforge.agents.codex.sandbox import MASKED, make_mount_points, sandbox_args
from swarmforge.config.sessionrecord import SessionRecord
from tests.realagents import (
    LiveSwarm,
    needs_tmux,
    screen_of,
    tool_results,
    unavailable,
    wait_state,
    without_bwrap,
)
from tests.support import git, make_swarm, retry_until

OTHER = "window qa exec qa true\n"  # another role, so that another worktree exists
BYPASSES = ("--dangerously-skip-permissions", "bypassPermissions", "--yolo")
BYPASSES += ("--dangerously-bypass-approvals-and-sandbox", "--full-auto")


def needs_bwrap(bwrap: bool) -> None:
    if bwrap and shutil.which("bwrap") is None:
        unavailable("bubblewrap is not installed (./setup.sh installs it)")


def work_then_escape(role: str, outside: list[Path], *, main: bool = False) -> str:
    """A role's first command: commit, ask for work, hand over, then write outside (and,
    in the main checkout, `main`, into git's configuration)."""
    return (
        "git -c user.name=c -c user.email=c@example.com commit -q --allow-empty -m boxed; "
        + "ready_for_next.sh; echo ready=$?; "
        + f"printf 'type: note\\nto: {role}\\npriority: 50\\nmessage: hi\\n' > d; "
        + "swarm_handoff.sh d; echo handoff=$?; "
        + "".join(f"echo x > {path}; " for path in outside)
        + ("git config core.hooksPath /tmp; " if main else "")
        + "echo finished"
    )


def outside_of(repo: Path, tmp_path: Path, *, main: bool = False) -> list[Path]:
    """Files a role must not be able to write: in another role's worktree and in the home
    directory; and in the main checkout, or for a role there (`main`), what would make
    git run a program."""
    found = [repo / ".worktrees" / "qa" / "escaped.txt", tmp_path / "x.txt"]
    return found + ([repo / ".git" / "hooks" / "pre-commit"] if main else [repo / "escaped.txt"])


def agent_argvs(name: str, worktree: str) -> list[list[str]]:
    """The command lines of the `name` processes (claude, codex) working in `worktree`."""
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        argv = process.info["cmdline"] or []
        here = process.info["cwd"] == worktree or worktree in argv
        if argv and Path(argv[0]).name == name and here:
            found.append(argv)
    return found


def up_working(
    live: LiveSwarm,
    role: str,
    agent: str,
    tmp_path: Path,
    path: str | None = None,
    *,
    main: bool = False,
) -> tuple[SessionRecord, list[Path]]:
    """Start `role` on `agent` in its worktree (in the main checkout if `main`), its first
    command `work_then_escape`; the session and the files it must not write."""
    repo = live.repo
    tree = "master" if main else role
    make_swarm(repo, f"window {role} {agent} {tree}\n" + OTHER, prompts={role: "Work.\n"})
    outside = outside_of(repo, tmp_path, main=main)
    live.first = [work_then_escape(role, outside, main=main)]
    return live.up(path=path), outside


def unbypassed(record: SessionRecord, role: str, agent: str) -> list[list[str]]:
    """The command lines of `role`'s `agent` processes, checked to carry no bypass flag."""
    found = record.role(role)
    assert found is not None
    argvs = agent_argvs(agent, found.path)
    assert argvs, f"no {agent} process found"
    for argv in argvs:
        assert not set(argv) & set(BYPASSES), argv
    return argvs


def boxed(
    live: LiveSwarm, repo: Path, role: str, outside: list[Path], *, main: bool = False
) -> str:
    """Wait for `role`'s first command; check it worked and wrote nothing outside."""
    retry_until(lambda: len(tool_results(live, role)) == 1, timeout=60)
    said = tool_results(live, role)[0]
    assert "finished" in said and "execvp" not in said, said
    tree = repo if main else repo / ".worktrees" / role
    assert git(tree, "log", "--format=%s", "-1") == "boxed", said
    assert "NO_TASK\nready=0" in said and "handoff=0" in said, said  # the helpers work
    assert not any(path.exists() for path in outside), said
    assert "hooksPath" not in (repo / ".git" / "config").read_text(), said
    return said


def codex_rules(worktree: Path) -> dict[str, str]:
    """The filesystem rules of the profile codex is given for a role in `worktree`, read
    back as codex reads them: TOML."""
    args = sandbox_args(str(worktree), '/t/it\'s "here"', [], interactive=False)
    assert args[:2] == ["-c", 'default_permissions="swarmforge"']
    key, value = args[3].split("=", 1)
    assert key == "permissions.swarmforge.filesystem"
    rules: dict[str, str] = tomllib.loads(f"rules = {value}")["rules"]
    return rules


def test_a_role_writes_its_worktree_and_what_git_writes_there_and_no_more(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "-b", "swarm/r/qa", str(repo / ".worktrees" / "qa"))
    common = repo / ".git"
    temp = '/t/it\'s "here"'  # a quote in a path stays inside its key
    rules = codex_rules(repo / ".worktrees" / "qa")
    assert rules == {
        "/": "read",
        str(repo / ".worktrees" / "qa"): "write",
        str(common / "worktrees" / "qa"): "write",
        str(common / "swarmforge" / "checkouts" / "qa"): "write",  # its mailbox
        **{str(common / name): "write" for name in ("objects", "refs", "logs")},
        temp: "write",
    }
    # In the main checkout a commit writes .git itself: all of it but what would make git
    # run a program, and the other roles' worktrees with git's records of them.
    main = codex_rules(repo)
    protected = [
        *(common / name for name in ("hooks", "config", "worktrees")),
        common / "swarmforge" / "checkouts",  # the other worktrees' mailboxes
        repo / ".worktrees",
    ]
    assert main[str(repo)] == main[str(common)] == "write"
    assert [path for path, access in main.items() if access == "read"] == [
        "/",
        *map(str, protected),
    ]
    assert sandbox_settings(str(repo), temp)["filesystem"] == {
        "allowWrite": [*(str(common / name) for name in ("objects", "refs", "logs")), temp],
        "denyWrite": list(map(str, protected)),
    }
    assert "denyWrite" not in str(sandbox_settings(str(repo / ".worktrees" / "qa"), temp))


def test_what_codex_would_mount_over_is_made_before_it_starts(repo: Path) -> None:
    # Made by the first of two sandboxes starting at once, it failed the other.
    tree = repo / ".worktrees" / "qa"
    git(repo, "worktree", "add", "-q", "-b", "swarm/r/qa", str(tree))
    (tree / ".codex").write_text("a file of that name is left as it is\n")
    make_mount_points(str(tree), "")
    common = repo / ".git"
    for root in (common / "objects", common / "refs", common / "logs", common / "worktrees/qa"):
        assert all((root / name).is_dir() for name in MASKED), root
    assert (tree / ".codex").is_file() and (tree / ".agents").is_dir()
    assert git(tree, "status", "--porcelain") == "?? .codex"  # empty directories: not for git
    # In the main checkout, before any worktree: what the profile keeps read-only exists.
    shutil.rmtree(tree)
    git(repo, "worktree", "prune")
    shutil.rmtree(repo / ".worktrees")
    assert not (common / "worktrees").exists()  # git's prune took it
    make_mount_points(str(repo), "")
    assert (repo / ".worktrees").is_dir() and (common / "worktrees").is_dir()


WHERE = pytest.mark.parametrize("main", [False, True], ids=["worktree", "main-checkout"])


@pytest.mark.slow
@needs_tmux
@WHERE
@pytest.mark.parametrize("bwrap", [True, False], ids=["system-bwrap", "no-bwrap"])
def test_codex_commits_and_hands_over_in_its_sandbox_and_writes_nothing_outside(
    repo: Path, live: LiveSwarm, tmp_path: Path, bwrap: bool, main: bool
) -> None:
    needs_bwrap(bwrap)
    path = None if bwrap else without_bwrap(tmp_path / "nobwrap")
    record, outside = up_working(live, "cleaner", "codex", tmp_path, path, main=main)
    said = boxed(live, repo, "cleaner", outside, main=main)
    assert "Read-only file system" in said
    for argv in unbypassed(record, "cleaner", "codex"):
        assert 'default_permissions="swarmforge"' in argv and "--sandbox" not in argv


@pytest.mark.slow
@needs_tmux
@WHERE
def test_claude_commits_and_hands_over_in_its_sandbox_and_writes_nothing_outside(
    repo: Path, live: LiveSwarm, tmp_path: Path, main: bool
) -> None:
    needs_bwrap(True)
    record, outside = up_working(live, "coder", "claude", tmp_path, main=main)
    boxed(live, repo, "coder", outside, main=main)
    unbypassed(record, "coder", "claude")


@pytest.mark.slow
@needs_tmux
def test_claude_without_bubblewrap_asks_before_it_runs_anything(
    repo: Path, live: LiveSwarm, tmp_path: Path
) -> None:
    # claude's sandbox cannot start: its commands go back to asking a person, never to
    # running unasked outside a box.
    _, outside = up_working(live, "coder", "claude", tmp_path, without_bwrap(tmp_path / "nobwrap"))
    wait_state(repo, "coder", "waiting")
    assert "Do you want to proceed?" in screen_of(repo, "coder")
    assert tool_results(live, "coder") == []
    assert git(repo / ".worktrees" / "coder", "log", "--format=%s", "-1") != "boxed"
    assert not any(path.exists() for path in outside)
