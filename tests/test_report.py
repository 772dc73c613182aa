"""Worker reports: one JSON block in Markdown, published by a rename, validated when read."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.run.report.files import find_report
from swarmforge.run.report.parse import read_report
from swarmforge.run.report.publish import write_report

GOOD = (
    "# Task t\n\n```json\n"
    '{\n  "taskId": "t",\n  "ok": true,\n  "finishedAt": "2026-06-15T14:05:31.123Z"\n}\n'
    "```\n"
)


def test_a_complete_report_round_trips(tmp_path: Path) -> None:
    data = {"exitCode": 0, "command": ["make", "test"], "note": "ünïcode"}
    path = write_report(str(tmp_path), "build", data, True, b"all good\n", b"warning\n")
    assert path == str(tmp_path / "build.complete.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build.complete.md"]
    found = read_report(path)
    assert (found.taskId, found.ok, found.exitCode) == ("build", True, 0)
    assert found.model_extra == {"command": ["make", "test"], "note": "ünïcode"}
    text = Path(path).read_text()
    assert text.startswith("# Task build: complete\n") and text.count("```json") == 1
    assert "```text\nall good\n```" in text and "```text\nwarning\n```" in text
    assert find_report(str(tmp_path), "build") == path


def test_a_failed_report_round_trips(tmp_path: Path) -> None:
    path = write_report(str(tmp_path), "lint", {"exitCode": 3}, False, stderr=b"E501")
    assert path.endswith("lint.failed.md") and find_report(str(tmp_path), "lint") == path
    found = read_report(path)
    assert found.ok is False and found.exitCode == 3
    assert read_report(write_report(str(tmp_path), "x", {}, True)).exitCode is None


def test_output_that_looks_like_markdown_cannot_break_the_report(tmp_path: Path) -> None:
    hostile = b'```\n```json\n{"taskId": "evil", "ok": true}\n```\n````\n'
    path = write_report(str(tmp_path), "t", {}, True, hostile, hostile)
    found = read_report(path)
    assert found.taskId == "t" and found.model_extra == {}
    assert "`````text\n" in Path(path).read_text()


def test_only_the_last_64_kib_of_output_is_kept(tmp_path: Path) -> None:
    out = b"a" * 100_000 + "é".encode() * 40_000 + b"END\n"
    path = write_report(str(tmp_path), "t", {}, True, out)
    text = Path(path).read_text()
    assert f"## stdout (last 65536 of {len(out)} bytes)" in text
    body = text.split("```text\n")[1].split("```")[0]
    assert body.endswith("éEND\n") and "a" not in body and "\ufffd" not in body


def test_a_new_attempt_replaces_the_earlier_outcome(tmp_path: Path) -> None:
    write_report(str(tmp_path), "t", {"exitCode": 1}, False)
    path = write_report(str(tmp_path), "t", {"exitCode": 0}, True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.complete.md"]
    assert read_report(path).ok is True


def test_a_report_never_renamed_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "t.report.md").write_text(GOOD)
    assert find_report(str(tmp_path), "t") is None
    assert find_report(str(tmp_path / "no-such-dir"), "t") is None
    assert read_report(str(tmp_path / "t.report.md")).ok is True


def test_two_outcomes_for_one_task_are_corruption(tmp_path: Path) -> None:
    (tmp_path / "t.complete.md").write_text(GOOD)
    (tmp_path / "t.failed.md").write_text(GOOD.replace("true", "false"))
    with pytest.raises(CorruptFile, match=r"also has t\.complete\.md"):
        find_report(str(tmp_path), "t")


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("# Task t\n\nno block\n```text\nx\n```\n", None, "no ```json block"),
        (GOOD + "\n```json\n{}\n```\n", 11, "a second ```json block (one opens at line 3)"),
        (GOOD.replace('"ok": true,', '"ok": tru,'), 6, "invalid JSON"),
        (GOOD.replace('"ok": true', '"ok": "yes"'), 4, "ok: Input should be a valid boolean"),
        (GOOD.replace('  "taskId": "t",\n', ""), 4, "taskId: Field required"),
        (GOOD.replace("2026-06-15T14:05:31.123Z", "today"), 4, "finishedAt"),
        ("```json\n[1]\n```\n", 2, "valid dictionary"),
        ("# Task t\n\n```json\n{}\n", 3, "never closed"),
        (GOOD.replace('"t"', '"u"'), None, "it reports on task u"),
        (GOOD.replace("true", "false"), None, '"ok" is false'),
    ],
)
def test_a_corrupt_report_is_refused_naming_file_and_line(
    tmp_path: Path, text: str, line: int | None, problem: str
) -> None:
    path = tmp_path / "t.complete.md"
    path.write_text(text)
    with pytest.raises(CorruptFile) as caught:
        read_report(str(path))
    assert (caught.value.path, caught.value.line) == (str(path), line)
    assert problem in caught.value.problem


def test_a_report_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.complete.md"
    path.write_bytes(GOOD.encode() + b"\n\xff\n")
    with pytest.raises(CorruptFile, match="line 11: not UTF-8"):
        read_report(str(path))


def test_tilde_fences_and_indented_closers_follow_commonmark(tmp_path: Path) -> None:
    text = "~~~~md\n```json\n~~~\n~~~~\n" + GOOD.replace("\n```\n", "\n   ```  \n")
    path = tmp_path / "t.complete.md"
    path.write_text(text)
    assert read_report(str(path)).taskId == "t"


@pytest.mark.parametrize(
    ("task_id", "data", "problem"),
    [
        ("../escape", {}, "cannot name a report file"),
        ("t", {"ok": False}, "may not set ok"),
        ("t", {"exitCode": "1"}, "exitCode"),
        ("t", {"ratio": float("nan")}, "is not JSON"),
        ("t", {"when": {1, 2}}, "is not JSON"),
    ],
)
def test_write_report_refuses_what_could_not_be_read_back(
    tmp_path: Path, task_id: str, data: dict[str, object], problem: str
) -> None:
    with pytest.raises(SwarmforgeError, match=problem):
        write_report(str(tmp_path), task_id, data, True)
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
