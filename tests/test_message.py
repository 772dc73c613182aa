"""The handoff model: strict parsing, rendering, and the gate on arbitrary input."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmforge.errors import CorruptFile
from swarmforge.handoff import gate, message
from swarmforge.handoff.draft import HandoffInvalid
from swarmforge.handoff.mailbox import Box
from tests.support import Project, copy_tree, make_template

FIELD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-0123456789", min_size=1, max_size=12)
VALUE = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda v: not any(0x7F <= ord(c) < 0xA0 for c in v))


@st.composite
def handoffs(draw: st.DrawFn) -> message.Handoff:
    fields = draw(st.lists(FIELD, unique=True, max_size=8))
    headers = [(f, draw(VALUE)) for f in fields]
    body = draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200))
    return message.Handoff(headers, body)


@given(handoffs())
def test_render_then_parse_round_trips(h: message.Handoff) -> None:
    data = h.render()
    assert message.parse(data, "x") == h
    assert message.parse(data, "x").render() == data


@given(st.binary(max_size=300))
def test_parse_accepts_or_names_a_line(data: bytes) -> None:
    try:
        h = message.parse(data, "f.handoff")
    except CorruptFile as exc:
        assert exc.path == "f.handoff" and exc.line is not None and exc.line >= 1
        assert str(exc).startswith(f"f.handoff, line {exc.line}: ")
    else:
        assert message.parse(h.render(), "again") == h


@pytest.mark.parametrize(
    ("data", "line", "problem"),
    [
        (b"a: 1\nb\n\nbody", 2, "expected 'field: value'"),
        (b"a: 1\na: 2\n\n", 2, "duplicate header 'a'"),
        (b"a b: 1\n\n", 1, "header name 'a b' may hold only letters, digits, '_' and '-'."),
        (b"a: \xff\n\n", 1, "not valid UTF-8"),
    ],
)
def test_parse_errors_name_file_and_line(data: bytes, line: int, problem: str) -> None:
    with pytest.raises(CorruptFile) as info:
        message.parse(data, "/m/x.handoff")
    assert (info.value.line, info.value.problem) == (line, problem.rstrip("."))


def test_with_header_replaces_in_place_or_appends() -> None:
    h = message.Handoff([("a", "1"), ("b", "2")], "body\n")
    assert h.with_header("a", "9").headers == [("a", "9"), ("b", "2")]
    assert h.with_header("c", "3").headers == [("a", "1"), ("b", "2"), ("c", "3")]
    with pytest.raises(ValueError):
        h.with_header("c", "two\nlines")


@pytest.fixture(scope="module")
def fuzz_project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    base = tmp_path_factory.mktemp("fuzz")
    repo = copy_tree(make_template(base / "template"), base / "project")
    return Project(repo, {"coder": "task", "qa": "batch"})


DRAFT_LINES = st.sampled_from(
    [
        b"type: note",
        b"type: git_handoff",
        b"to: qa",
        b"to: qa,coder",
        b"to: qa,",
        b"priority: 50",
        b"priority: 5",
        b"message: hello",
        b"task: t",
        b"commit: 0123456789",
        b"id: x",
        b"",
        b"garbage",
        b"message: \xff\xfe",
        b"to: nobody",
        b"type: note\r",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.lists(DRAFT_LINES, max_size=8).map(lambda ls: b"\n".join(ls) + b"\n"),
    )
)
def test_arbitrary_drafts_are_queued_or_refused_with_errors(
    fuzz_project: Project, data: bytes
) -> None:
    tree = fuzz_project.tree("coder")
    draft = tree / "fuzz.draft"
    draft.write_bytes(data)
    outbox = fuzz_project.box("coder", Box.OUTBOX)
    before = set(outbox.iterdir()) if outbox.exists() else set()
    try:
        path = gate.queue_handoff("fuzz.draft", cwd=str(tree), role="coder")
    except HandoffInvalid as exc:
        assert exc.exit_code == 2 and exc.errors
        assert all(isinstance(e, str) and "\n" not in e for e in exc.errors)
        assert draft.read_bytes() == data, "a rejected draft is never deleted"
        assert set(outbox.iterdir()) == before if outbox.exists() else True
    else:
        assert not draft.exists()
        queued = message.read(path)
        assert queued.get("from") == "coder" and Path(path).parent == outbox
