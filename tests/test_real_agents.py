"""The real claude and codex CLIs working in the swarm, offline against the scripted model."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import psutil
import pytest
import tomli_w

from swarmforge import tagging
from swarmforge.agents import conversation, lifecycle
from swarmforge.config.scaffold import packs
from swarmforge.daemon.wake import TmuxWaker
from swarmforge.rehearse.wire import Exchange
from swarmforge.swarm.session.down import down
from swarmforge.tmux.server import project_socket
from tests.realagents import OPENING, LiveSwarm, agents_path, tool_results
from tests.support import git, make_swarm, nothing_left, retry_until
from tests.support import run_cli as sf

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

# As `init` leaves them, with no extra arguments: each agent in its own sandbox.
CHAIN = "window coder claude master\nwindow cleaner codex cleaner batch\n"
UNBOXED_CODER = "[roles.coder]\nsandbox = false\n"


def _project(repo: Path, conf: str, script: str | None = None) -> Path:
    r = sf("init", "--pack", "two-pack", ".", cwd=repo)
    assert r.returncode == 0, r.stderr
    (repo / "swarmforge" / "swarmforge.conf").write_text(conf)
    if script is not None:
        (repo / "swarmforge" / "rehearse.toml").write_text(script)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "swarm")
    return repo


def _rehearse(repo: Path, *args: str) -> tuple[int, dict[str, object], str]:
    r = sf(
        "rehearse", "swarmforge/rehearse.toml", "--json", "--keep", *args,
        cwd=repo, path_extra=agents_path(), timeout=300,
    )  # fmt: skip
    report: dict[str, object] = json.loads(r.stdout) if r.stdout.strip() else {}
    copy = report.get("copy")
    if isinstance(copy, str):
        nothing_left(Path(copy) / "project")
        shutil.rmtree(copy)
    return r.returncode, report, r.stderr


def _turns(report: dict[str, object], role: str) -> list[dict[str, object]]:
    roles = report["roles"]
    assert isinstance(roles, dict)
    turns: list[dict[str, object]] = roles[role]["turns"]
    return turns


@pytest.mark.slow
def test_rehearsal_relays_a_git_handoff_from_claude_to_codex_and_back(repo: Path) -> None:
    _project(repo, CHAIN)
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    code, report, stderr = _rehearse(repo)
    assert code == 0, f"{report.get('problems')}\n{stderr}"
    # The example `init` wrote: the coder, claude in the main checkout, commits and hands
    # over; the cleaner, codex in its worktree, merges the commit and answers.
    coder, cleaner = _turns(report, "coder"), _turns(report, "cleaner")
    assert coder[0]["sent"] == ["cleaner"] and coder[1]["received"] == ["cleaner"]
    assert cleaner[1]["received"] == ["coder"] and cleaner[1]["sent"] == ["coder"]
    assert "hello from the rehearsal" in " ".join(cleaner[1]["outputs"])  # type: ignore[arg-type]
    # The user's own project is never touched: everything ran on a copy.
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == status
    assert not (repo / ".worktrees").exists() and not (repo / ".swarmforge").exists()
    assert not (repo / ".git" / "swarmforge").exists()


@pytest.mark.slow
@pytest.mark.parametrize("pack", packs())
def test_the_rehearsal_init_writes_passes_on_every_pack(repo: Path, pack: str) -> None:
    r = sf("init", "--pack", pack, ".", cwd=repo)
    assert r.returncode == 0, r.stderr
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "swarm")
    code, report, stderr = _rehearse(repo)
    # On a failure, every turn's commands and their output too, to say why.
    assert code == 0, f"{report.get('problems')}\n{json.dumps(report.get('roles'))}\n{stderr}"


def test_a_headless_rehearsal_that_could_never_start_is_refused_at_once(repo: Path) -> None:
    _project(repo, CHAIN)  # init's example: the agents start from their opening prompts
    r = sf("rehearse", "swarmforge/rehearse.toml", "--backend", "headless", cwd=repo)
    assert r.returncode == 1
    assert "a headless rehearsal can never start without a [[send]]" in r.stderr
    assert r.stderr.count("\n") <= 3, r.stderr  # refused before anything ran
    assert not (repo / ".swarmforge").exists() and not (repo / ".git" / "swarmforge").exists()


@pytest.mark.slow
def test_rehearsal_fails_naming_the_role_and_the_turn(repo: Path) -> None:
    script = (
        'timeout = 120\n[[roles.coder.turns]]\nrun = ["echo hello"]\n'
        'expect = { output = ["goodbye"], sent = ["cleaner"] }\n'
        # A turn that would wait for a wake-up nobody sends, out to the timeout.
        '[[roles.coder.turns]]\nsay = "Never reached."\n'
    )
    _project(repo, CHAIN, script)
    code, report, stderr = _rehearse(repo)
    assert code == 1
    assert report["problems"] == [
        "role coder, turn 1: expected 'goodbye' in the commands' output",
        "role coder, turn 1: expected a handoff to cleaner; none was queued",
        "role coder, turn 2: never began",
    ]
    # It stopped as soon as the turn failed, not at the timeout; each line says when.
    assert "a turn did not go as expected: stopping early" in stderr
    assert all(re.match(r"\[ *\d+\.\d s\] ", line) for line in stderr.splitlines()), stderr


@pytest.mark.slow
def test_a_command_codex_stops_waiting_for_is_waited_on_before_the_turn_goes_on(
    repo: Path,
) -> None:
    # codex answers "Process running" after 10 s and lets the command run on: the next
    # command must still see what the first one did once it ended.
    script = (
        "timeout = 120\n[[roles.cleaner.turns]]\n"
        'run = ["sleep 12 && mkdir -p tmp && echo written-then > tmp/late.txt && echo slept", '
        '"cat tmp/late.txt"]\n'
        'expect = { output = ["slept", "written-then"] }\n'
        '[[roles.coder.turns]]\nsay = "Waiting for handoffs."\n'
    )
    _project(repo, CHAIN, script)
    code, report, stderr = _rehearse(repo)
    assert code == 0, f"{report.get('problems')}\n{json.dumps(report.get('roles'))}\n{stderr}"
    outputs = " ".join(_turns(report, "cleaner")[0]["outputs"])  # type: ignore[arg-type]
    assert "Process running with session ID" in outputs  # codex did stop waiting


def _draft(headers: str, *args: str) -> str:
    """A command that writes a handoff draft with printf and hands it to the gate."""
    return " ".join(
        ["mkdir -p tmp && printf", f"'{headers}'", *args, "> tmp/d && swarm_handoff.sh tmp/d"]
    )


HANDOFF = "type: git_handoff\\nto: cleaner\\npriority: 50\\ntask: greeting\\ncommit: %s\\n"
HEADLESS = tomli_w.dumps(
    {
        "timeout": 180,
        "send": [{"to": "coder", "text": "Add a greeting and hand it to the cleaner."}],
        "roles": {
            "coder": {
                "turns": [
                    {
                        "run": [
                            "echo hi > greeting.txt && git add greeting.txt"
                            " && git commit -q -m greeting",
                            _draft(HANDOFF, '"$(git rev-parse --short=10 HEAD)"'),
                        ],
                        "expect": {"output": ["HANDOFF QUEUED"], "sent": ["cleaner"]},
                    },
                    {"say": "Thanks."},
                ]
            },
            "cleaner": {
                "turns": [
                    {
                        "run": [
                            "git merge --no-edit $(git rev-parse --verify -q main)"
                            " && cat greeting.txt",
                            _draft("type: note\\nto: coder\\npriority: 50\\nmessage: merged\\n"),
                        ],
                        "expect": {"output": ["hi", "HANDOFF QUEUED"], "sent": ["coder"]},
                    }
                ]
            },
        },
    }
)


@pytest.mark.slow
def test_the_same_chain_runs_headless(repo: Path) -> None:
    # `claude -p` refuses, even in its sandbox, a command whose quoted text it cannot
    # check (the handoff's printf of "$(git rev-parse ...)"), where an interactive
    # claude runs it: the headless coder is given Bash.
    coder = "window coder claude master --allowedTools Bash\n"
    _project(repo, CHAIN.replace("window coder claude master\n", coder), HEADLESS)
    code, report, stderr = _rehearse(repo, "--backend", "headless")
    assert code == 0, f"{report.get('problems')}\n{stderr}"
    coder = _turns(report, "coder")
    assert "Add a greeting" in str(coder[0]["prompt"]) and "merged" in str(coder[1]["prompt"])
    assert _turns(report, "cleaner")[0]["sent"] == ["coder"]


@pytest.mark.slow
def test_a_killed_agent_is_shown_exited_and_restarted_with_its_prompt(
    repo: Path, live: LiveSwarm
) -> None:
    make_swarm(repo, "window coder claude master\n", prompts={"coder": "Code.\n"})
    record = live.up()
    live.wait_openings("coder", 1)
    life = lifecycle.load(str(repo), "coder", record.run_id)
    assert life is not None and life.pid and psutil.Process(life.pid).name() == "claude"
    os.kill(life.pid, signal.SIGKILL)
    live.wait_openings("coder", 2)
    state = json.loads(sf("status", "--json", cwd=repo).stdout)
    process = state["roles"][0]["process"]
    assert process["state"] == "running" and process["restarts"] == 1
    assert process["exit_code"] == 128 + signal.SIGKILL
    shown = sf("status", cwd=repo).stdout
    assert f"restarted 1 time(s); last exit {128 + signal.SIGKILL}" in shown


@pytest.mark.slow
def test_after_a_reboot_up_resumes_each_agents_conversation(repo: Path, live: LiveSwarm) -> None:
    make_swarm(
        repo,
        "window coder claude master\nwindow cleaner codex cleaner\n",
        prompts={"coder": "Code.\n", "cleaner": "Clean.\n"},
    )
    record = live.up()
    roles = ("coder", "cleaner")
    for role in roles:
        live.wait_openings(role, 1)
    # Their hooks name each agent's own session, for the next `up` of the run.
    said = lambda: [conversation.read(str(repo), role) for role in roles]  # noqa: E731
    retry_until(lambda: all(said()), timeout=60)
    assert [c.agent for c in said() if c] == ["claude", "codex"]

    # A reboot: every process of the swarm and its tmux server gone at once, and the
    # server's socket with them (a /tmp on tmpfs).
    socket = project_socket(str(repo))
    tmux = ["tmux", "-L", socket, "display-message", "-p"]
    server = int(subprocess.run([*tmux, "#{pid}"], capture_output=True, text=True).stdout)
    path = subprocess.run([*tmux, "#{socket_path}"], capture_output=True, text=True).stdout
    retry_until(lambda: _killed(repo, server), timeout=30)
    Path(path.strip()).unlink(missing_ok=True)

    assert live.up().run_id == record.run_id  # the same run, read as stopped, not a failure
    for role in roles:
        retry_until(lambda role=role: _resumed(live, role) != [], timeout=60)
        [again] = _resumed(live, role)
        assert OPENING in again.history  # the conversation it had before, carried on


def _killed(repo: Path, server: int) -> bool:
    """Kill -9 the tmux server and what still runs of the swarm; True once none does (a
    zombie is dead). Asked again until then: a parent not yet killed may start another."""
    processes = tagging.tagged(str(repo))
    with contextlib.suppress(psutil.Error):
        processes.append(psutil.Process(server))
    running = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if process.status() != psutil.STATUS_ZOMBIE:
                process.kill()
                running.append(process)
    return not running


def _resumed(live: LiveSwarm, role: str) -> list[Exchange]:
    return [
        e
        for e in live.server.exchanges(role)
        if e.new_turn and not e.side and conversation.RESUMED[:40] in e.user_text
    ]


@pytest.mark.slow
def test_a_wake_up_of_over_2000_characters_is_submitted_to_codex(
    repo: Path, live: LiveSwarm
) -> None:
    make_swarm(repo, "window cleaner codex cleaner\n", prompts={"cleaner": "Clean.\n"})
    live.up()
    live.wait_openings("cleaner", 1)
    text = "Please handle this: " + " ".join(f"item-{n:04d}" for n in range(220)) + " END"
    assert len(text) > 2000
    waker = TmuxWaker(project_socket(str(repo)), background=False)
    assert waker.submit("swarmforge-cleaner", text)
    retry_until(
        lambda: any(
            e.new_turn and not e.side and "item-0219 END" in e.user_text
            for e in live.server.exchanges()
        ),
        timeout=30,
    )


@pytest.mark.slow
def test_down_ends_every_process_of_the_run_codex_daemon_included(
    repo: Path, live: LiveSwarm
) -> None:
    # Outside codex's sandbox, whose process namespace would end the daemon with the command.
    make_swarm(
        repo,
        "window cleaner codex cleaner --dangerously-bypass-approvals-and-sandbox\n",
        prompts={"cleaner": "Clean.\n"},
    )
    # codex starts its shared app-server itself unless told not to (and never when given
    # a -c option, as the swarm gives it); the agent starts it here as codex would.
    live.first = ["codex app-server daemon start"]
    record = live.up(keep_codex_daemon=True)
    live.wait_openings("cleaner", 1)

    def command_line(process: psutil.Process) -> str:
        try:
            return " ".join(process.cmdline())
        except psutil.Error:
            return ""  # it ended between the listing and this look: no daemon

    def daemons() -> list[psutil.Process]:
        return [
            p for p in tagging.tagged(str(repo), record.run_id) if "app-server" in command_line(p)
        ]

    retry_until(lambda: daemons() != [], timeout=30)
    down(str(repo))
    assert daemons() == [] and tagging.tagged(str(repo)) == []


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_helpers_are_on_path_whatever_the_agents_shell_start_up_files_say(
    repo: Path, live: LiveSwarm, tmp_path: Path, agent: str
) -> None:
    make_swarm(repo, f"window worker {agent} worker\n", prompts={"worker": "Work.\n"})
    home = tmp_path / "homes" / "worker"
    home.mkdir(parents=True)
    for start_up in (".bashrc", ".bash_profile", ".profile", ".zshrc"):
        (home / start_up).write_text("export PATH=/usr/bin:/bin\n")
    where = "command -v ready_for_next.sh swarmforge || echo MISSING"
    live.first = [where]
    live.up()
    bin_dir = (repo / ".swarmforge" / "bin").resolve()  # where the state lies
    retry_until(lambda: tool_results(live, "worker") != [], timeout=30)
    said = tool_results(live, "worker")[0]
    assert f"{bin_dir}/swarmforge" in said and "MISSING" not in said, said


@pytest.mark.slow
def test_an_agent_waiting_for_an_approval_ends_the_rehearsal_with_its_screen(repo: Path) -> None:
    script = (
        "timeout = 120\nstall = 5\n[[roles.coder.turns]]\n"
        'run = ["git commit -q --allow-empty -m unapproved"]\n'
    )
    # Outside its sandbox: claude asks before it runs git commit.
    _project(repo, CHAIN, script)
    (repo / "swarmforge" / "swarmforge.toml").write_text(UNBOXED_CODER)
    code, report, _ = _rehearse(repo)
    assert code == 1
    problems = report["problems"]
    assert isinstance(problems, list) and len(problems) >= 1
    assert problems[0].startswith(
        "role coder, turn 1: no result of `git commit -q --allow-empty -m unapproved` after 5 s"
    )
    assert "Do you want to proceed?" in problems[0]


@pytest.mark.slow
def test_claude_runs_the_helpers_without_asking(repo: Path) -> None:
    script = (
        "timeout = 120\nstall = 15\n[[roles.coder.turns]]\n"
        'run = ["ready_for_next.sh"]\nexpect = { output = ["NO_TASK"] }\n'
    )
    # Outside its sandbox, only the swarm's own --settings lets the helper through.
    _project(repo, CHAIN, script)
    (repo / "swarmforge" / "swarmforge.toml").write_text(UNBOXED_CODER)
    code, report, stderr = _rehearse(repo)
    assert code == 0, f"{report.get('problems')}\n{stderr}"
