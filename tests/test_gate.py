"""The gate (swarm_handoff.sh): every rule, message and exit code of docs/protocol.md."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarmforge.handoff import draftfile, gate, message
from swarmforge.handoff.draft import HandoffInvalid
from swarmforge.handoff.mailbox import Box
from tests.support import BIN, Project, git, run_script, script_env


def handoff_ok(project: Project, role: str, text: str) -> tuple[Path, message.Handoff]:
    draft = project.draft(role, text)
    result = run_script("swarm_handoff.sh", project.tree(role), role, draft.name)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    prefix = "HANDOFF QUEUED: "
    assert result.stdout.startswith(prefix) and result.stdout.count("\n") == 1
    path = Path(result.stdout[len(prefix) :].strip())
    assert path.is_absolute() and path.parent == project.box(role, Box.OUTBOX)
    assert not draft.exists(), "a queued draft is deleted"
    assert claims(draft.parent) == []
    return path, message.read(str(path))


def claims(directory: Path) -> list[str]:
    """Drafts a gate has taken and not let go (draftfile.CLAIM_SUFFIX)."""
    return [p.name for p in directory.iterdir() if p.name.endswith(draftfile.CLAIM_SUFFIX)]


def errors_of(project: Project, role: str, text: str) -> list[str]:
    draft = project.draft(role, text)
    before = draft.read_bytes()
    result = run_script("swarm_handoff.sh", project.tree(role), role, draft.name)
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.split("\n")
    assert lines[0] == f"HANDOFF INVALID: {draft.name}"
    assert lines[1:3] == ["", "Errors:"]
    assert "Usage: swarm_handoff.sh <draft-file>" in result.stderr
    assert draft.read_bytes() == before, "a rejected draft is kept as it was"
    assert claims(draft.parent) == []
    assert project.names(role, Box.OUTBOX) in ([], ["tmp"]), "nothing is queued"
    return [line[2:] for line in lines[3:] if line.startswith("- ")]


def test_git_handoff_is_stamped_and_queued(project: Project) -> None:
    commit = project.commit("coder")
    path, h = handoff_ok(
        project,
        "coder",
        f"type: git_handoff\nto: cleaner,qa\npriority: 40\ntask: t-1\ncommit: {commit}\n",
    )
    stamp = h.get("id", "")[:16]
    assert path.name == f"40_{stamp}_000001_from_coder_to_cleaner_qa.handoff"
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
    assert h.get("id") == f"{stamp}_000001_from_coder"
    assert (h.get("from"), h.get("to"), h.get("role")) == ("coder", "cleaner,qa", "coder")
    assert (h.get("task"), h.get("commit")) == ("t-1", commit)
    created = h.get("created_at", "")
    assert (
        created == f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:"
        f"{stamp[13:15]}Z"
    )
    assert h.body == f"Re-read your role and constitution.\n\nmerge_and_process coder {commit}\n"
    assert project.names("coder", Box.OUTBOX_TMP) == []
    assert (project.box("coder", "") / "sequence").read_text() == "000001\n"


def test_note_is_queued_with_its_message(project: Project) -> None:
    path, h = handoff_ok(
        project, "qa", "type: note\nto: coder\npriority: 70\nmessage: all tests pass\n"
    )
    assert path.name.endswith("_000001_from_qa_to_coder.handoff")
    assert [f for f, _ in h.headers] == [
        "id",
        "from",
        "to",
        "priority",
        "type",
        "message",
        "created_at",
    ]
    assert h.body == "Re-read your role and constitution.\n\nall tests pass\n"


def test_sequence_numbers_follow_each_other(project: Project) -> None:
    names = [
        handoff_ok(project, "coder", f"type: note\nto: qa\npriority: 50\nmessage: m{i}\n")[0].name
        for i in range(3)
    ]
    assert [n.split("_")[2] for n in names] == ["000001", "000002", "000003"]


def test_commit_is_written_in_canonical_form(project: Project) -> None:
    commit = project.commit("coder")
    _, h = handoff_ok(
        project,
        "coder",
        f"type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: {commit.upper()}\n",
    )
    assert h.get("commit") == commit


def test_commit_must_be_a_commit(project: Project) -> None:
    tree = git(project.tree("coder"), "rev-parse", "HEAD^{tree}")[:10]
    errors = errors_of(
        project, "coder", f"type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: {tree}\n"
    )
    assert errors == [f"Header 'commit' must resolve to a commit; '{tree}' resolves to 'tree'."]


def test_commit_must_exist(project: Project) -> None:
    errors = errors_of(
        project, "coder", "type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: 0000000000\n"
    )
    assert errors == [
        "Header 'commit' must resolve to exactly one Git object; '0000000000' matched 0."
    ]


def test_a_ref_spelled_like_hex_is_not_taken_for_an_object(project: Project) -> None:
    git(project.tree("coder"), "branch", "deadbeef00")
    errors = errors_of(
        project, "coder", "type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: deadbeef00\n"
    )
    assert errors == [
        "Header 'commit' must resolve to exactly one Git object; 'deadbeef00' matched 0."
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "type: note\nto: qa\npriority: 50\nmessage: m\nid: x\n",
            ["Line 5: header 'id' is reserved and must not be written by agents."],
        ),
        (
            "type: note\nto: qa\npriority: 50\nmessage: m\ncreated_at: x\n",
            ["Line 5: header 'created_at' is reserved and must not be written by agents."],
        ),
        (
            "type: note\nto: qa\npriority: 50\nmessage: m\ncolour: red\n",
            ["Line 5: unknown header 'colour'."],
        ),
        (
            "type: note\nto: qa\nto: coder\npriority: 50\nmessage: m\n",
            ["Line 3: duplicate header 'to'."],
        ),
        (
            "type: note\nto qa\npriority: 50\nmessage: m\n",
            ["Line 2: expected 'field: value'.", "Missing required header 'to'."],
        ),
        (
            "type: note\nto: \npriority: 50\nmessage: m\n",
            ["Line 2: field and value must both be non-empty.", "Missing required header 'to'."],
        ),
        (
            "type: note\nto: qa\npriority: 50\nmessage: m\n\nplease read this\n",
            [
                "Line 6: draft handoffs may contain headers only; payloads are generated by "
                "swarm_handoff.sh."
            ],
        ),
        (
            "",
            [
                "Missing required header 'type'.",
                "Missing required header 'to'.",
                "Missing required header 'priority'.",
            ],
        ),
        (
            "type: awake\nto: qa\npriority: 50\n",
            ["Header 'type' must be one of git_handoff or note; got 'awake'."],
        ),
        (
            "type: note\nto: qa\npriority: 5\nmessage: m\n",
            ["Header 'priority' must be two digits from 00 to 99; got '5'."],
        ),
        (
            "type: note\nto: qa\npriority: 100\nmessage: m\n",
            ["Header 'priority' must be two digits from 00 to 99; got '100'."],
        ),
        (
            "type: note\nto: qa,,coder\npriority: 50\nmessage: m\n",
            ["Header 'to' contains an empty recipient."],
        ),
        (
            "type: note\nto: qa,\npriority: 50\nmessage: m\n",
            ["Header 'to' contains an empty recipient."],
        ),
        ("type: note\nto: qa,qa\npriority: 50\nmessage: m\n", ["Duplicate recipient 'qa'."]),
        ("type: note\nto: qa,ops\npriority: 50\nmessage: m\n", ["Unknown recipient role 'ops'."]),
        (
            "type: note\nto: q_a\npriority: 50\nmessage: m\n",
            [
                "Recipient role 'q_a' is invalid; role names may not contain underscores.",
                "Unknown recipient role 'q_a'.",
            ],
        ),
        ("type: note\nto: qa\npriority: 50\n", ["Missing required header 'message' for note."]),
        (
            "type: note\nto: qa\npriority: 50\nmessage: " + "m" * 81 + "\n",
            ["Header 'message' must be no longer than 80 characters; got 81."],
        ),
        (
            "type: note\nto: qa\npriority: 50\nmessage: m\ntask: t\n",
            ["Header 'task' is not allowed for type 'note'."],
        ),
        (
            "type: git_handoff\nto: qa\npriority: 50\ncommit: 0123456789\n",
            [
                "Missing required header 'task' for git_handoff.",
                "Header 'commit' must resolve to exactly one Git object; '0123456789' matched 0.",
            ],
        ),
        (
            "type: git_handoff\nto: qa\npriority: 50\ntask: t\n",
            ["Missing required header 'commit' for git_handoff."],
        ),
        (
            "type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: abc\n",
            ["Header 'commit' must be exactly 10 hexadecimal characters; got 'abc'."],
        ),
        (
            "type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: 012345678g\n",
            ["Header 'commit' must be exactly 10 hexadecimal characters; got '012345678g'."],
        ),
        (
            "type: git_handoff\nto: qa\npriority: 50\ntask: " + "t" * 81 + "\ncommit: 0123456789\n",
            [
                "Header 'task' must be no longer than 80 characters; got 81.",
                "Header 'commit' must resolve to exactly one Git object; '0123456789' matched 0.",
            ],
        ),
        (
            "type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: 0123456789\nmessage: m\n",
            [
                "Header 'message' is not allowed for type 'git_handoff'.",
                "Header 'commit' must resolve to exactly one Git object; '0123456789' matched 0.",
            ],
        ),
        (
            "type: note\nto: qa\npriority: 50\nmessage: a\rb\n",
            [
                "Line 4: header values may not contain control characters.",
                "Missing required header 'message' for note.",
            ],
        ),
    ],
)
def test_invalid_drafts_list_every_error(project: Project, text: str, expected: list[str]) -> None:
    assert errors_of(project, "coder", text) == expected


def test_non_utf8_lines_are_named(project: Project) -> None:
    draft = project.tree("coder") / "draft.txt"
    draft.write_bytes(b"type: note\nto: qa\npriority: 50\nmessage: caf\xe9\n")
    result = run_script("swarm_handoff.sh", project.tree("coder"), "coder", "draft.txt")
    assert result.returncode == 2
    assert "- Line 4: not valid UTF-8." in result.stderr
    assert draft.exists()


def test_usage_errors_exit_1(project: Project) -> None:
    for args in ([], ["a", "b"]):
        result = run_script("swarm_handoff.sh", project.tree("coder"), "coder", *args)
        assert result.returncode == 1
        assert result.stderr.startswith("Usage: swarm_handoff.sh <draft-file>\n")
        assert result.stdout == ""


def test_missing_draft(project: Project) -> None:
    result = run_script("swarm_handoff.sh", project.tree("coder"), "coder", "nope.txt")
    assert (result.returncode, result.stderr) == (1, "Draft file not found: nope.txt\n")


def test_two_gates_on_one_draft_queue_it_once(project: Project) -> None:
    tree = project.tree("coder")
    env = script_env("coder")
    for n in range(8):
        project.draft("coder", f"type: note\nto: qa\npriority: 50\nmessage: m{n}\n")
        gates = [
            subprocess.Popen(
                [str(BIN / "swarm_handoff.sh"), "draft.txt"],
                cwd=tree,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        results = [(g.wait(timeout=60), *g.communicate()) for g in gates]
        codes = sorted(code for code, _, _ in results)
        assert codes == [0, 1], results
        loser = next(err for code, _, err in results if code == 1)
        assert loser == "Draft file not found: draft.txt\n" or loser.startswith(
            "Draft file is being queued by another gate (pid "
        ), loser
        assert len(project.names("coder", Box.OUTBOX)) == n + 2  # tmp/ and one per round
        assert claims(tree) == []


def test_a_draft_left_by_a_killed_gate_is_not_sent_again(project: Project) -> None:
    # A gate killed after taking the draft leaves it under its claimed name.
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = project.tree("coder") / f".draft.txt.{dead.pid}{draftfile.CLAIM_SUFFIX}"
    left.write_text("type: note\nto: qa\npriority: 50\nmessage: m\n")
    result = run_script("swarm_handoff.sh", project.tree("coder"), "coder", "draft.txt")
    assert (result.returncode, result.stderr) == (
        1,
        "Draft file not found: draft.txt\n"
        f"A gate that was interrupted left it as {left}; "
        "look in outbox/ and sent/ before queueing it again.\n",
    )
    assert left.exists() and project.names("coder", Box.OUTBOX) == []


def test_role_must_be_set(project: Project) -> None:
    draft = project.draft("coder", "type: note\nto: qa\npriority: 50\nmessage: m\n")
    for role in (None, ""):
        result = run_script("swarm_handoff.sh", project.tree("coder"), role, draft.name)
        assert (result.returncode, result.stderr) == (1, "Set SWARMFORGE_ROLE.\n")
    assert draft.exists()


def test_unknown_sender(project: Project) -> None:
    draft = project.draft("coder", "type: note\nto: qa\npriority: 50\nmessage: m\n")
    result = run_script("swarm_handoff.sh", project.tree("coder"), "ops", draft.name)
    assert (result.returncode, result.stderr) == (1, "Unknown sender role: ops\n")


def test_no_project_root(tmp_path: Path) -> None:
    (tmp_path / "d").write_text("type: note\nto: qa\npriority: 50\nmessage: m\n")
    result = run_script("swarm_handoff.sh", tmp_path, "coder", "d")
    assert (result.returncode, result.stderr) == (1, "Cannot find SwarmForge project root\n")


def test_corrupt_sequence_is_refused_not_reset(project: Project) -> None:
    seq = project.box("coder", "") / "sequence"
    seq.parent.mkdir(parents=True)
    seq.write_text("12x\n")
    draft = project.draft("coder", "type: note\nto: qa\npriority: 50\nmessage: m\n")
    result = run_script("swarm_handoff.sh", project.tree("coder"), "coder", draft.name)
    assert result.returncode == 1
    assert result.stderr == f"{seq}, line 1: expected a sequence number, got '12x'\n"
    assert seq.read_text() == "12x\n" and draft.exists()


def test_api_queues_from_a_worktree(project: Project) -> None:
    project.draft("cleaner", "type: note\nto: coder\npriority: 10\nmessage: hi\n", "d")
    path = gate.queue_handoff("d", cwd=str(project.tree("cleaner")), role="cleaner")
    assert Path(path).parent == project.box("cleaner", Box.OUTBOX)
    with pytest.raises(HandoffInvalid) as info:
        project.draft("cleaner", "type: note\n", "d")
        gate.queue_handoff("d", cwd=str(project.tree("cleaner")), role="cleaner")
    assert info.value.exit_code == 2
    assert info.value.errors[0] == "Missing required header 'to'."


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\x02",
        b"\xff" * 10,
        b"type: note\x00\n",
        b"\n\n\n",
        b": \n",
        b"to: " + "é".encode() * 300 + b"\n",
    ],
)
def test_binary_drafts_get_errors_never_a_traceback(project: Project, data: bytes) -> None:
    draft = project.tree("coder") / "bin.draft"
    draft.write_bytes(data)
    r = run_script("swarm_handoff.sh", project.tree("coder"), "coder", "bin.draft")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("HANDOFF INVALID: bin.draft\n\nErrors:\n- ")
    assert draft.read_bytes() == data


def test_an_ambiguous_abbreviation_is_refused(project: Project) -> None:
    # Two blobs whose ids share their first ten hex digits (found once by brute force).
    tree = project.tree("coder")
    oids = []
    for n in (323371, 1225837):
        (tree / "blob").write_bytes(b"swarmforge ambiguity %d\n" % n)
        oids.append(git(tree, "hash-object", "-w", "blob"))
    assert oids[0][:10] == oids[1][:10] == "74763450ff"
    errors = errors_of(
        project, "coder", "type: git_handoff\nto: qa\npriority: 50\ntask: t\ncommit: 74763450FF\n"
    )
    assert errors == [
        "Header 'commit' must resolve to exactly one Git object; '74763450FF' matched 2."
    ]
