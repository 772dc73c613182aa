"""`swarmforge send`: the user's handoffs through the gate, the daemon and the receive helpers."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

from swarmforge.daemon.dispatcher import Dispatcher
from swarmforge.daemon.wake import Waker
from swarmforge.handoff import fromuser, message
from swarmforge.handoff.draft import HandoffInvalid
from swarmforge.handoff.mailbox import Box, Mailbox
from tests.support import VENV_BIN, Project, git, run_script
from tests.support import run_cli as sf

LONG = (
    "Please refactor the parser so that every error names its file and line, "
    "and keep the old messages working\n"
    "\n"
    "Details:\n"
    "- the gate's errors\n"
    "- the daemon's errors\n"
)
SUMMARY = LONG.split("\n")[0][:79] + "\u2026"


def queued(result: subprocess.CompletedProcess[str], project: Project) -> Path:
    assert result.returncode == 0, result.stderr
    prefix = "HANDOFF QUEUED: "
    assert result.stdout.startswith(prefix) and result.stdout.count("\n") == 1
    path = Path(result.stdout[len(prefix) :].strip())
    assert path.parent == Path(Mailbox(str(project.root)).path(Box.OUTBOX))
    return path


def refused(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.split("\n")
    assert lines[:3] == ["HANDOFF INVALID: swarmforge send", "", "Errors:"]
    assert "Usage: swarmforge send ROLE" in result.stderr
    return [line[2:] for line in lines[3:] if line.startswith("- ")]


def test_a_long_note_keeps_its_header_short_and_its_whole_text_in_the_body(
    project: Project,
) -> None:
    path = queued(sf("send", "cleaner", LONG, cwd=project.root), project)
    h = message.read(str(path))
    stamp = (h.get("id") or "")[:16]
    assert path.name == f"50_{stamp}_000001_from_user_to_cleaner.handoff"
    assert h.headers == [
        ("id", f"{stamp}_000001_from_user"),
        ("from", "user"),
        ("to", "cleaner"),
        ("priority", "50"),
        ("type", "note"),
        ("message", SUMMARY),
        ("created_at", h.get("created_at")),
    ]
    assert len(SUMMARY) == 80
    assert h.body == f"Re-read your role and constitution.\n\n{SUMMARY}\n\n{LONG}"
    sequence = Path(Mailbox(str(project.root)).root) / "sequence"
    assert sequence.read_text() == "000001\n"


def test_a_one_line_note_is_exactly_what_an_agents_note_would_be(project: Project) -> None:
    r = sf("send", "qa,coder", "--priority", "10", "run the tests", cwd=project.root)
    h = message.read(str(queued(r, project)))
    assert (h.get("to"), h.get("priority"), h.get("message")) == ("qa,coder", "10", "run the tests")
    assert h.body == "Re-read your role and constitution.\n\nrun the tests\n"


def test_the_text_can_come_from_stdin_and_the_result_as_json(project: Project) -> None:
    r = subprocess.run(
        [f"{VENV_BIN}/swarmforge", "send", "coder", "--json", "-"],
        cwd=project.root,
        input="\n  first   line\twith a tab  \nsecond line\n",
        capture_output=True,
        text=True,
        env={"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": "/nonexistent"},
        check=False,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["headers"]["from"] == "user"
    assert result["headers"]["message"] == "first line with a tab"
    assert result["body"].endswith("\n\n\n  first   line\twith a tab  \nsecond line\n")
    assert message.read(result["path"]).body == result["body"]


def test_a_git_handoff_resolves_its_commit_as_the_gate_does(project: Project) -> None:
    commit = project.commit("coder")
    r = sf(
        "send",
        "qa",
        "--type",
        "git_handoff",
        "--commit",
        commit.upper(),
        "Review: the new parser (v2)!\nMore words.",
        cwd=project.root,
    )
    h = message.read(str(queued(r, project)))
    assert [f for f, _ in h.headers] == [
        "id",
        "from",
        "to",
        "priority",
        "type",
        "role",
        "task",
        "commit",
        "created_at",
    ]
    assert (h.get("from"), h.get("role"), h.get("commit")) == ("user", "user", commit)
    assert h.get("task") == "review-the-new-parser-v2"
    assert h.body == (
        f"Re-read your role and constitution.\n\nmerge_and_process user {commit}\n\n"
        "Review: the new parser (v2)!\nMore words.\n"
    )
    r = sf(
        "send",
        "qa",
        "--type",
        "git_handoff",
        "--commit",
        commit,
        "--task",
        "t-9",
        "go",
        cwd=project.root,
    )
    assert message.read(str(queued(r, project))).get("task") == "t-9"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["ops", "hi"], ["Unknown recipient role 'ops'."]),
        (
            ["qa", "--priority", "5", "hi"],
            ["Header 'priority' must be two digits from 00 to 99; got '5'."],
        ),
        (
            ["qa", "--type", "wish", "hi"],
            ["Header 'type' must be one of git_handoff or note; got 'wish'."],
        ),
        (
            ["qa", "--commit", "0123456789", "hi"],
            ["Header 'commit' is not allowed for type 'note'."],
        ),
        (["qa", "  \n"], ["The text is empty: say what the handoff is about."]),
        (
            ["qa", "--type", "git_handoff", "hi"],
            ["Missing required header 'commit' for git_handoff."],
        ),
        (
            ["qa", "--type", "git_handoff", "--commit", "0000000000", "hi"],
            ["Header 'commit' must resolve to exactly one Git object; '0000000000' matched 0."],
        ),
        (
            ["qa", "--type", "git_handoff", "--commit", "HEAD", "--task", "t" * 81, "hi"],
            [
                "Header 'task' must be no longer than 80 characters; got 81.",
                "Header 'commit' must be exactly 10 hexadecimal characters; got 'HEAD'.",
            ],
        ),
        (
            ["qa", "--type", "git_handoff", "--commit", "abc", "--task", "a\tb\x01", "hi"],
            [
                "Header 'task' may not contain control characters.",
                "Header 'commit' must be exactly 10 hexadecimal characters; got 'abc'.",
            ],
        ),
    ],
)
def test_refusals_are_the_gates_errors_and_queue_nothing(
    project: Project, args: list[str], expected: list[str]
) -> None:
    assert refused(sf("send", *args, cwd=project.root)) == expected
    assert Mailbox(str(project.root)).items(Box.OUTBOX) == []


def test_a_tree_is_not_a_commit(project: Project) -> None:
    tree = git(project.root, "rev-parse", "HEAD^{tree}")[:10]
    r = sf("send", "qa", "--type", "git_handoff", "--commit", tree, "x", cwd=project.root)
    assert refused(r) == [f"Header 'commit' must resolve to a commit; '{tree}' resolves to 'tree'."]


def test_without_a_project_it_exits_1(project: Project, tmp_path: Path) -> None:
    r = sf("send", "qa", "hi", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, "Cannot find SwarmForge project root\n")
    r = sf("send", "--project", str(tmp_path / "nope"), "qa", "hi", cwd=tmp_path)
    assert r.returncode == 1 and "no such directory" in r.stderr
    r = sf("send", "--project", str(project.root), "qa", "hi", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_the_api_returns_the_path_and_the_handoff(project: Project) -> None:
    path, handoff = fromuser.send(str(project.root), "qa", "a\nb", priority="07")
    assert message.read(path) == handoff
    assert handoff.get("message") == "a" and handoff.body.endswith("\n\na\nb\n")
    with pytest.raises(HandoffInvalid) as caught:
        fromuser.send(str(project.root), "qa", "x", priority="7")
    assert caught.value.exit_code == 2
    assert caught.value.errors == ["Header 'priority' must be two digits from 00 to 99; got '7'."]


def test_no_agent_can_send_as_the_user(repo: Path) -> None:
    swarm = Project(repo, {"user": "task", "qa": "task"})
    draft = swarm.draft("user", "type: note\nto: qa\npriority: 50\nmessage: m\n")
    r = run_script("swarm_handoff.sh", swarm.tree("user"), "user", draft.name)
    assert (r.returncode, r.stderr) == (1, "Sender role 'user' is reserved for swarmforge send.\n")
    draft = swarm.draft("qa", "type: note\nto: qa\npriority: 50\nmessage: m\nfrom: user\n")
    r = run_script("swarm_handoff.sh", swarm.tree("qa"), "qa", draft.name)
    assert r.returncode == 2
    assert "- Line 5: header 'from' is reserved and must not be written by agents." in r.stderr


def test_a_sent_note_is_delivered_by_the_daemon_and_read_whole_by_the_role(
    project: Project,
) -> None:
    path = queued(sf("send", "qa", LONG, cwd=project.root), project)
    r = sf("daemon", "run", "--once", "--notify", "none", "--json", cwd=project.root)
    assert r.returncode == 0 and '"delivered": 1' in r.stdout, r.stderr
    assert project.names("qa", Box.NEW) == [path.name]
    assert (Path(Mailbox(str(project.root)).path(Box.SENT)) / path.name).exists()
    copy = message.read(str(project.box("qa", Box.NEW) / path.name))
    assert (copy.get("from"), copy.get("recipient")) == ("user", "qa")
    r = run_script("ready_for_next.sh", project.tree("qa"), "qa")
    assert r.returncode == 0, r.stderr
    assert "\nCOUNT: 1\n" in r.stdout
    assert "\nFROM: user\nTYPE: note\nPRIORITY: 50\nPAYLOAD:\n" in r.stdout
    assert r.stdout.endswith(f"{SUMMARY}\n\n{LONG}")


def test_the_daemon_scans_the_main_checkout_outbox_once_whoever_works_there(repo: Path) -> None:
    log = logging.getLogger("test-send")
    swarm = Project(repo, {"coder": "task"})
    daemon = Dispatcher(str(repo), Waker(), log)
    daemon.load_roles()
    outbox = Mailbox(str(repo)).path(Box.OUTBOX)
    assert daemon.outboxes() == sorted([outbox, swarm.mailbox("coder").path(Box.OUTBOX)])
    roles_tsv = repo / ".swarmforge" / "roles.tsv"
    with roles_tsv.open("a") as f:
        f.write(f"lead\tmaster\t{repo}\tswarmforge-lead\tLead\tcodex\ttask\n")
    daemon.load_roles()
    assert "lead" in daemon.roles and len(daemon.outboxes()) == 2
    # The same directory reached through a symbolic link is still one outbox.
    (repo.parent / "link").symlink_to(repo)
    linked = Dispatcher(str(repo.parent / "link"), Waker(), log)
    linked.load_roles()
    assert linked.outboxes() == daemon.outboxes()
