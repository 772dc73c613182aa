"""The park ledgers of a run, the JSONL line reader they share with the journal, and stamps."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.run import fields, jsonl
from swarmforge.run.parking import ledgers


def entries(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def test_park_records_once_with_its_reason(tmp_path: Path) -> None:
    assert ledgers.parked(str(tmp_path)) == {}
    assert ledgers.park(str(tmp_path), "deploy", "irreversible") is True
    assert ledgers.park(str(tmp_path), "deploy", "irreversible") is False
    assert ledgers.park(str(tmp_path), "audit", "legal") is True
    assert ledgers.parked(str(tmp_path)) == {"deploy": "irreversible", "audit": "legal"}
    lines = entries(tmp_path / ledgers.PARKED)
    assert [(e["id"], e["reason"]) for e in lines] == [
        ("deploy", "irreversible"),
        ("audit", "legal"),
    ]
    assert all(str(e["ts"]).endswith("Z") for e in lines)


def test_park_refuses_an_unknown_reason_and_a_missing_run(tmp_path: Path) -> None:
    with pytest.raises(SwarmforgeError, match="unknown reason 'whim'"):
        ledgers.park(str(tmp_path), "x", "whim")
    with pytest.raises(SwarmforgeError, match="No run at"):
        ledgers.park(str(tmp_path / "gone"), "x", "manual")


def test_approve_lets_a_parked_task_run_and_repeating_it_is_a_no_op(tmp_path: Path) -> None:
    ledgers.park(str(tmp_path), "deploy", "tier-t4")
    assert ledgers.approve(str(tmp_path), "deploy", "alice") is True
    assert ledgers.approve(str(tmp_path), "deploy", "bob") is False
    assert ledgers.approved(str(tmp_path)) == {"deploy"}
    assert ledgers.rejected(str(tmp_path)) == set()
    assert [e["by"] for e in entries(tmp_path / ledgers.APPROVALS)] == ["alice"]


def test_reject_is_final(tmp_path: Path) -> None:
    run = str(tmp_path)
    ledgers.park(run, "drop-db", "security")
    assert ledgers.reject(run, "drop-db", "alice", "never") is True
    assert ledgers.reject(run, "drop-db", "bob") is False
    assert ledgers.rejected(run) == {"drop-db"}
    with pytest.raises(SwarmforgeError, match=f"Run {tmp_path.name}: cannot approve task drop-db"):
        ledgers.approve(run, "drop-db", "carol")
    assert entries(tmp_path / ledgers.REJECTIONS)[0]["note"] == "never"
    assert not (tmp_path / ledgers.APPROVALS).exists()


def test_an_approved_task_cannot_be_rejected(tmp_path: Path) -> None:
    run = str(tmp_path)
    ledgers.park(run, "deploy", "manual")
    ledgers.approve(run, "deploy", "alice")
    with pytest.raises(SwarmforgeError, match="cannot reject task deploy: it was already approved"):
        ledgers.reject(run, "deploy", "bob")


@pytest.mark.parametrize("decide", [ledgers.approve, ledgers.reject])
def test_deciding_a_task_that_is_not_parked_is_an_error(
    tmp_path: Path, decide: Callable[[str, str, str], bool]
) -> None:
    ledgers.park(str(tmp_path), "other", "manual")
    with pytest.raises(
        SwarmforgeError, match=f"Run {tmp_path.name}: .* task ghost: it is not parked"
    ):
        decide(str(tmp_path), "ghost", "alice")


def test_a_hand_added_approval_does_not_outweigh_a_rejection(tmp_path: Path) -> None:
    run = str(tmp_path)
    ledgers.park(run, "x", "manual")
    ledgers.reject(run, "x", "alice")
    line = b'{"id":"x","ts":"2026-06-15T14:05:31.123Z","by":"mallory"}\n'
    (tmp_path / ledgers.APPROVALS).write_bytes(line)
    assert ledgers.approved(run) == set() and ledgers.rejected(run) == {"x"}


def test_a_torn_ledger_tail_is_skipped_then_cut_off_by_the_next_append(tmp_path: Path) -> None:
    run = str(tmp_path)
    ledgers.park(run, "a", "manual")
    path = tmp_path / ledgers.PARKED
    with path.open("ab") as f:
        f.write(b'{"id":"b","ts":"2026-06-1')
    assert ledgers.parked(run) == {"a": "manual"}
    ledgers.park(run, "c", "legal")
    assert [e["id"] for e in entries(path)] == ["a", "c"]


def test_a_corrupt_ledger_line_is_refused_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / ledgers.PARKED
    path.write_bytes(
        b'{"id":"a","ts":"2026-06-15T14:05:31.123Z","reason":"manual"}\n'
        b'{"id":"b","ts":"2026-06-15T14:05:31.123Z","reason":"boredom"}\n'
        b'{"id":"c","ts":"2026-06-15T14:05:31.123Z","reason":"manual"}\n'
    )
    with pytest.raises(CorruptFile) as caught:
        ledgers.parked(str(tmp_path))
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert caught.value.problem.startswith("reason:")
    with pytest.raises(CorruptFile):
        ledgers.park(str(tmp_path), "d", "manual")
    assert len(entries(path)) == 3


def test_concurrent_decisions_on_one_task_record_exactly_one(tmp_path: Path) -> None:
    run = str(tmp_path)
    ledgers.park(run, "x", "manual")
    outcomes: list[str] = []

    def decide(verb: str) -> None:
        try:
            done = (
                ledgers.approve(run, "x", "a")
                if verb == "approve"
                else ledgers.reject(run, "x", "b")
            )
            outcomes.append(f"{verb}:{done}")
        except SwarmforgeError:
            outcomes.append(f"{verb}:refused")

    threads = [threading.Thread(target=decide, args=(v,)) for v in ["approve", "reject"] * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ledgers.approved(run)) + len(ledgers.rejected(run)) == 1
    assert sum(o.endswith(":True") for o in outcomes) == 1


def test_the_line_reader_reports_torn_tails_and_where_valid_data_ends() -> None:
    adapter = TypeAdapter(dict[str, int])
    records, warnings, end = jsonl.parse_lines("f", b'{"a":1}\n{"a":2}\n{"a"', adapter)
    assert records == [{"a": 1}, {"a": 2}] and end == 16
    assert warnings == ["f, line 3: torn last line (no newline), skipped"]
    records, warnings, end = jsonl.parse_lines("f", b'{"a":1}\n{"a":"x"}\n', adapter)
    assert records == [{"a": 1}] and end == 8 and "line 2: torn last line (a:" in warnings[0]
    assert jsonl.parse_lines("f", b"", adapter) == ([], [], 0)
    with pytest.raises(CorruptFile, match="f, line 1: "):
        jsonl.parse_lines("f", b'{"a":"x"}\n{"a":1}\n', adapter)


def test_stamps_are_iso_utc_with_milliseconds() -> None:
    assert fields.utc_stamp(1781532331.1239) == "2026-06-15T14:05:31.123Z"
    assert fields.utc_stamp(0) == "1970-01-01T00:00:00.000Z"
