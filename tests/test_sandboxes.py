"""Agents work in their own sandboxes, fitted by swarmforge to each role's worktree.

Started as a user starts them (the agents' one-time set-up, then `up`), with the real
claude and codex CLIs offline against the scripted model, with and without Debian's
bubblewrap: a role commits, asks for its next item and hands over with no extra
arguments and no approval prompt, and what it writes outside its worktree (the main
checkout, another role's worktree, the home directory) fails and changes nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psutil
import pytest

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


def work_then_escape(role: str, outside: list[Path]) -> str:
    """A role's first command: commit, ask for work, hand over, then write outside."""
    return (
        "git -c user.name=c -c user.email=c@example.com commit -q --allow-empty -m boxed; "
        + "ready_for_next.sh; echo ready=$?; "
        + f"printf 'type: note\\nto: {role}\\npriority: 50\\nmessage: hi\\n' > d; "
        + "swarm_handoff.sh d; echo handoff=$?; "
        + "; ".join(f"echo x > {path}" for path in outside)
        + "; echo finished"
    )


def outside_of(repo: Path, tmp_path: Path) -> list[Path]:
    """Files a role must not be able to write: in the main checkout, in another role's
    worktree and in the home directory."""
    return [repo / "escaped.txt", repo / ".worktrees" / "qa" / "escaped.txt", tmp_path / "x.txt"]


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
    live: LiveSwarm, role: str, agent: str, tmp_path: Path, path: str | None = None
) -> tuple[SessionRecord, list[Path]]:
    """Start `role` on `agent` in its worktree, its first command `work_then_escape`; the
    session and the files it must not write."""
    repo = live.repo
    make_swarm(repo, f"window {role} {agent} {role}\n" + OTHER, prompts={role: "Work.\n"})
    outside = outside_of(repo, tmp_path)
    live.first = [work_then_escape(role, outside)]
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


def boxed(live: LiveSwarm, repo: Path, role: str, outside: list[Path]) -> str:
    """Wait for `role`'s first command; check it worked and wrote nothing outside."""
    retry_until(lambda: len(tool_results(live, role)) == 1, timeout=60)
    said = tool_results(live, role)[0]
    assert "finished" in said and "execvp" not in said, said
    assert git(repo / ".worktrees" / role, "log", "--format=%s", "-1") == "boxed", said
    assert "NO_TASK\nready=0" in said and "handoff=0" in said, said  # the helpers work
    assert not any(path.exists() for path in outside), said
    return said


@pytest.mark.slow
@needs_tmux
@pytest.mark.parametrize("bwrap", [True, False], ids=["system-bwrap", "no-bwrap"])
def test_codex_commits_and_hands_over_in_its_sandbox_and_writes_nothing_outside(
    repo: Path, live: LiveSwarm, tmp_path: Path, bwrap: bool
) -> None:
    needs_bwrap(bwrap)
    path = None if bwrap else without_bwrap(tmp_path / "nobwrap")
    record, outside = up_working(live, "cleaner", "codex", tmp_path, path)
    said = boxed(live, repo, "cleaner", outside)
    assert "Read-only file system" in said
    for argv in unbypassed(record, "cleaner", "codex"):
        assert argv[argv.index("--sandbox") + 1] == "workspace-write"


@pytest.mark.slow
@needs_tmux
def test_claude_commits_and_hands_over_in_its_sandbox_and_writes_nothing_outside(
    repo: Path, live: LiveSwarm, tmp_path: Path
) -> None:
    needs_bwrap(True)
    record, outside = up_working(live, "coder", "claude", tmp_path)
    boxed(live, repo, "coder", outside)
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
