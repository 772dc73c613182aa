"""The project's event log: what each part of the tool records, how it reads, `events`."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from swarmforge import eventread, events, statedir
from swarmforge.cli.events_cmd import since_stamp
from swarmforge.config import sessionrecord
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box
from swarmforge.layout import EVENTS_LOG
from swarmforge.run.orchestrator import Orchestrator
from swarmforge.run.spec.runspec import RunSpec, run_id
from tests.support import (
    SWARMFORGE,
    VENV_BIN,
    Project,
    make_swarm,
    nothing_left,
    retry_until,
    run_script,
)
from tests.support import run_cli as sf


def logged(root: Path, *kinds: str) -> list[dict[str, object]]:
    """The events of the project at `root` (of `kinds`, if given), as a reader sees them."""
    chunk = eventread.read(events.log_path(str(root)))
    assert chunk.bad == []
    return [e for e in chunk.events if not kinds or e["kind"] in kinds]


def fields(event: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in event.items() if k != "ts"}


# -- writing and reading --------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        'quote " and back\\slash',
        "été ünïcode ☃ and 😀",
        "",
        0,
        -7,
        12345678901234567890,
        True,
        False,
        ["a", "b"],
        {"done": 3, "failed": 1},
        1.5,
    ],
)
def test_a_line_is_exactly_what_json_dumps_makes(value: object) -> None:
    line = events.encode("k", {"v": value}, "2026-06-15T14:05:31.000001Z")
    expected = json.dumps(
        {"ts": "2026-06-15T14:05:31.000001Z", "kind": "k", "v": value}, separators=(",", ":")
    )
    assert line == (expected + "\n").encode()


def test_values_stay_on_one_printable_line_and_none_is_left_out() -> None:
    line = events.encode("k", {"a": "two\nlines\x1b[31m", "b": None, "c": "x" * 2000}, "t")
    event = json.loads(line)
    assert event["a"] == "two\\x0alines\\x1b[31m" and "b" not in event
    assert len(str(event["c"])) == events.MAX_TEXT and line.count(b"\n") == 1


def test_readers_skip_a_torn_last_line_and_recover_an_event_glued_to_a_fragment(
    tmp_path: Path,
) -> None:
    (tmp_path / ".swarmforge").mkdir()
    log = events.EventLog(str(tmp_path))
    assert log.emit("one", {"n": 1})
    path = Path(log.path)
    with path.open("ab") as f:
        f.write(b'{"ts":"2026-01-01T00:00:00.000000Z","ki')  # a writer killed mid-write
    assert [e["kind"] for e in eventread.read(log.path).events] == ["one"]
    assert log.emit("two", {"n": 2})  # appended to the fragment
    with path.open("ab") as f:
        f.write(b"garbage\n[1, 2]\n")
    assert log.emit("three", {"n": 3})
    chunk = eventread.read(log.path)
    assert [e["kind"] for e in chunk.events] == ["one", "two", "three"]
    assert chunk.bad == [(2, "a torn or damaged line"), (3, "not an event"), (4, "not an event")]
    # Reading on from an offset gives only what came after it.
    first = eventread.read(log.path)
    assert log.emit("four", {})
    later = eventread.read(log.path, first.end, first.lines)
    assert [e["kind"] for e in later.events] == ["four"] and later.lines == 6


def test_a_long_log_is_read_in_pieces_and_from_its_end(tmp_path: Path) -> None:
    (tmp_path / ".swarmforge").mkdir()
    log = events.EventLog(str(tmp_path))
    for n in range(3000):
        assert log.emit("step", {"n": n, "pad": "x" * 40})
    with Path(log.path).open("ab") as f:
        f.write(b'{"ts":"2026-01-01T00:00:00.000000Z","ki')  # a line still being written
    # In pieces of about 16 KiB: every event once, in order, the torn tail left for later.
    seen: list[object] = []
    offset = lines = 0
    while True:
        chunk = eventread.read(log.path, offset, lines, limit=1 << 14)
        if chunk.end == offset:
            break
        assert chunk.end - offset < (1 << 14) + 200
        seen.extend(e["n"] for e in chunk.events)
        offset, lines = chunk.end, chunk.lines
    assert seen == list(range(3000)) and lines == 3000
    # From the end: the last lines only, and where to read on from.
    last = eventread.tail(log.path, 5)
    assert [e["n"] for e in last.events] == [2995, 2996, 2997, 2998, 2999]
    assert last.end == offset
    assert eventread.tail(log.path, 0).events == [] and eventread.tail(log.path, 0).end == offset
    assert len(eventread.tail(log.path, 10_000).events) == 3000
    assert eventread.tail(str(tmp_path / "none.jsonl"), 5).events == []


def test_a_line_over_the_limit_is_skipped_with_a_note_and_the_events_around_it_read(
    tmp_path: Path,
) -> None:
    (tmp_path / ".swarmforge").mkdir()
    log = events.EventLog(str(tmp_path))
    path = Path(log.path)
    for n in range(3):
        assert log.emit("step", {"n": n})
    with path.open("ab") as f:
        f.write(events.START + b"x" * 5000 + b'"}\n')  # line 4: five times the limit below
    for n in range(3, 6):
        assert log.emit("step", {"n": n})
    note = "a line longer than 1,000 bytes"
    # Forward, in pieces smaller than the line, and whole; and from the end.
    for limit in (300, None):
        seen: list[object] = []
        bad: list[tuple[int, str]] = []
        offset = lines = 0
        while True:
            chunk = eventread.read(log.path, offset, lines, limit=limit, longest=1000)
            if chunk.end == offset:
                break
            seen += [e["n"] for e in chunk.events]
            bad += chunk.bad
            offset, lines = chunk.end, chunk.lines
        assert seen == list(range(6)) and bad == [(4, note)] and lines == 7
        assert offset == path.stat().st_size
    last = eventread.tail(log.path, 5, longest=1000)
    assert [e["n"] for e in last.events] == [2, 3, 4, 5] and last.bad == [(2, note)]
    assert last.end == path.stat().st_size and last.lines == 5
    # One still being written is skipped once past the limit; its rest is a line of its own.
    with path.open("ab") as f:
        f.write(events.START + b"y" * 2000)
    chunk = eventread.read(log.path, offset, lines, longest=1000)
    assert (chunk.events, chunk.bad, chunk.lines) == ([], [(8, note)], 7)
    with path.open("ab") as f:
        f.write(b'"}\n')
    assert log.emit("step", {"n": 6})
    rest = eventread.read(log.path, chunk.end, chunk.lines, longest=1000)
    assert [e["n"] for e in rest.events] == [6] and rest.bad == [(8, "not an event")]


READ_HUGE = """
import json, re, sys
from swarmforge import eventread
path = sys.argv[1]
last = eventread.tail(path, 200)
offset = lines = 0
read, bad = [], []
while True:
    chunk = eventread.read(path, offset, lines, limit=1 << 20)
    if chunk.end == offset:
        break
    read += [e["n"] for e in chunk.events]
    bad += chunk.bad
    offset, lines = chunk.end, chunk.lines
print(json.dumps({
    "tail": [e["n"] for e in last.events], "tail_bad": last.bad, "read": read, "bad": bad,
    # VmHWM, not ru_maxrss: that one keeps the peak of the parent it was forked from.
    "peak_mib": int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read())[1]) / 1024,
}))
"""


def test_a_100_mb_line_costs_the_readers_its_reading_never_its_size(tmp_path: Path) -> None:
    (tmp_path / ".swarmforge").mkdir()
    log = events.EventLog(str(tmp_path))
    for n in range(300):
        assert log.emit("step", {"n": n})
    with Path(log.path).open("ab") as f:  # among the last 200 lines: `tail` crosses it
        f.write(events.START)
        for _ in range(100):
            f.write(b"x" * (1 << 20))
        f.write(b'"}\n')
    for n in range(300, 400):
        assert log.emit("step", {"n": n})
    # In a child: its peak memory is the readers'. Before, this took a minute and 600 MB.
    done = subprocess.run(
        [sys.executable, "-c", READ_HUGE, log.path], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    note = [301, f"a line longer than {eventread.LINE_LIMIT:,} bytes"]
    assert found["tail"] == list(range(201, 400)) and found["tail_bad"] == [[100, note[1]]]
    assert found["read"] == list(range(400)) and found["bad"] == [note]
    assert found["peak_mib"] < 100, found["peak_mib"]  # the line alone is 100 MiB


def test_an_event_that_cannot_be_written_never_fails_what_emits_it(project: Project) -> None:
    # The log's place taken by a directory: every write fails, every operation goes on.
    Path(events.log_path(str(project.root))).mkdir()
    seen: list[OSError] = []
    assert not events.EventLog(str(project.root), on_error=seen.append).emit("k", {})
    assert len(seen) == 1
    project.draft("coder", "type: note\nto: cleaner\npriority: 50\nmessage: hi\n")
    r = run_script("swarm_handoff.sh", project.tree("coder"), "coder", "draft.txt")
    assert r.returncode == 0 and r.stderr == ""
    daemon = sf("daemon", "run", "--once", "--notify", "none", cwd=project.root)
    assert daemon.returncode == 0, daemon.stderr
    r = run_script("ready_for_next.sh", project.tree("cleaner"), "cleaner")
    assert r.returncode == 0 and r.stdout.startswith("TASK: ")
    log = (project.root / ".swarmforge" / "daemon" / "handoffd.log").read_text()
    assert log.count("events are not recorded") == 1


# -- what the tool records ------------------------------------------------------------------


def test_a_handoffs_life_through_the_helpers_and_the_daemon(project: Project) -> None:
    commit = project.commit("coder")
    project.draft(
        "coder", f"type: git_handoff\nto: cleaner,qa\npriority: 40\ntask: t1\ncommit: {commit}\n"
    )
    r = run_script("swarm_handoff.sh", project.tree("coder"), "coder", "draft.txt")
    assert r.returncode == 0, r.stderr
    name = Path(r.stdout.split("HANDOFF QUEUED: ")[1].strip()).name
    assert sf("daemon", "run", "--once", "--notify", "none", cwd=project.root).returncode == 0
    for role in ("cleaner", "qa"):
        r = run_script("ready_for_next.sh", project.tree(role), role)
        assert r.returncode == 0 and name in r.stdout, r.stderr
    for role in ("cleaner", "qa"):
        r = run_script("done_with_current.sh", project.tree(role), role)
        assert r.returncode == 0 and "COMPLETED" in r.stdout, r.stderr
    batch = next(project.box("qa", Box.COMPLETED).iterdir()).name
    sender = {"name": name, "from": "coder", "priority": "40"}
    assert [fields(e) for e in logged(project.root)] == [
        {
            "kind": "handoff-queued",
            "name": name,
            "from": "coder",
            "to": "cleaner,qa",
            "priority": "40",
            "type": "git_handoff",
            "task": "t1",
            "commit": commit,
        },
        {"kind": "handoff-delivered", **sender, "to": "cleaner"},
        {"kind": "handoff-delivered", **sender, "to": "qa"},
        {
            "kind": "handoff-dequeued",
            "name": name,
            "role": "cleaner",
            "from": "coder",
            "priority": "40",
        },
        {"kind": "handoff-dequeued", **sender, "role": "qa", "batch": batch},
        {"kind": "handoff-completed", **sender, "role": "cleaner"},
        {"kind": "handoff-completed", **sender, "role": "qa", "batch": batch},
    ]
    stamps = [str(e["ts"]) for e in logged(project.root)]
    assert stamps == sorted(stamps)


def test_a_failed_delivery_and_a_set_aside_file(project: Project) -> None:
    name = "50_20260101T000000Z_000001_from_coder_to_nobody.handoff"
    outbox = project.box("coder", Box.OUTBOX)
    outbox.mkdir(parents=True)
    headers = [("id", "x"), ("from", "coder"), ("to", "nobody"), ("priority", "50")]
    (outbox / name).write_bytes(message.Handoff([*headers, ("type", "note")], "hi\n").render())
    assert sf("daemon", "run", "--once", "--notify", "none", cwd=project.root).returncode == 0
    corrupt = project.box("cleaner", Box.NEW)
    corrupt.mkdir(parents=True)
    bad = "50_20260101T000000Z_000002_from_coder_to_cleaner.handoff"
    (corrupt / bad).write_bytes(b"no headers at all\n")
    r = run_script("ready_for_next.sh", project.tree("cleaner"), "cleaner")
    assert r.stdout == "NO_TASK\n" and "SET_ASIDE" in r.stderr
    failed, aside = logged(project.root)
    assert fields(failed) == {
        "kind": "handoff-failed",
        "name": name,
        "from": "coder",
        "reason": "unknown recipient role 'nobody'",
    }
    assert aside["kind"] == "handoff-set-aside" and aside["name"] == bad
    assert aside["role"] == "cleaner" and "reason" in aside


def test_a_planned_runs_task_states_are_copied_with_the_run_id(tmp_path: Path) -> None:
    spec = RunSpec.model_validate(
        {
            "goal": "g",
            "tasks": [
                {"id": "a", "command": ["true"]},
                {"id": "b", "command": ["sh", "-c", "exit 4"], "dependsOn": ["a"]},
            ],
        }
    )
    Orchestrator(str(tmp_path), spec).run()
    rid = run_id(spec)
    seen = [fields(e) for e in logged(tmp_path)]
    assert seen[0] == {"kind": "run-started", "run_id": rid, "goal": "g", "tasks": 2}
    assert {
        "kind": "task-state",
        "run_id": rid,
        "task_id": "a",
        "status": "done",
        "exit_code": 0,
    } in seen
    assert {
        "kind": "task-state",
        "run_id": rid,
        "task_id": "b",
        "status": "failed",
        "exit_code": 4,
    } in seen
    assert seen[-1] == {
        "kind": "run-finished",
        "run_id": rid,
        "counts": {"done": 1, "failed": 1},
        "ok": False,
    }
    # `tail` shows nested values as compact JSON, never as Python's reprs.
    text = sf("tail", rid, cwd=tmp_path).stdout
    assert 'counts={"done":1,"failed":1}' in text and "{'" not in text


AGENT = """#!/bin/sh
n=$(cat lives 2>/dev/null || echo 0); n=$((n + 1)); echo $n > lives
[ "$n" -gt 1 ] && exec sleep 300
exit 3
"""


def follow(repo: Path) -> subprocess.Popen[str]:
    """`swarmforge events --follow --json` in `repo`, running."""
    return subprocess.Popen(
        [SWARMFORGE, "events", "--follow", "--json"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_agent_exits_and_restarts_then_follow_ends_with_the_swarm(repo: Path) -> None:
    make_swarm(
        repo,
        "window coder ./agent.sh master\nwindow lint exec lint task true\n",
        {"agent.sh": AGENT},
        {"coder": "Code.\n"},
    )
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    follower = None
    try:
        record = sessionrecord.load(str(repo))
        assert record is not None
        started = lambda: logged(repo, "agent-started")  # noqa: E731
        retry_until(lambda: any(e["restarts"] == 1 for e in started()), timeout=30)
        follower = follow(repo)
        assert follower.stdout is not None
        first = json.loads(follower.stdout.readline())
        assert first["kind"] == "swarm-up"
    finally:
        assert sf("down", cwd=repo).returncode == 0
    out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0 and err == ""
    last = json.loads(out.splitlines()[-1])
    assert (last["kind"], last["run_id"]) == ("swarm-down", record.run_id)
    mine = [
        fields(e)
        for e in logged(repo)
        if e.get("role") == "coder" and e["kind"] not in ("agent-state", "captured")
    ]
    pid = mine[0]["pid"]
    assert mine[:3] == [
        {
            "kind": "agent-started",
            "role": "coder",
            "run_id": record.run_id,
            "pid": pid,
            "restarts": 0,
        },
        {"kind": "agent-exited", "role": "coder", "run_id": record.run_id, "exit_code": 3},
        {"kind": "agent-restarting", "role": "coder", "run_id": record.run_id, "after": 1.0},
    ]
    assert mine[3]["kind"] == "agent-started" and mine[3]["restarts"] == 1
    up = logged(repo, "swarm-up")[0]
    assert up["roles"] == ["coder", "lint"] and up["backend"] == "headless"
    nothing_left(repo)


# -- the command ------------------------------------------------------------------------------


def fill(root: Path, count: int) -> None:
    (root / ".swarmforge").mkdir(exist_ok=True)
    log = events.EventLog(str(root))
    log.emit_many(
        ("handoff-queued", {"name": f"n{i}", "to": "qa", "note": "a b"}) for i in range(count)
    )


def test_events_text_json_and_since(tmp_path: Path) -> None:
    assert sf("events", cwd=tmp_path).stdout == ""
    fill(tmp_path, 2)
    path = Path(events.log_path(str(tmp_path)))
    with path.open("ab") as f:
        f.write(
            b'{"ts":"2000-01-01T00:00:00.000000Z","kind":"old","counts":{"a":1},"l":["x","y"]}\n'
        )
        f.write(b"not json\n")
        f.write(b'{"ts":"2000-01-01T00:00:01.0')  # torn: never shown
    stored = [line for line in path.read_bytes().split(b"\n")[:-1] if line.startswith(b"{")]
    r = sf("events", "--json", cwd=tmp_path)
    assert r.stdout.encode().splitlines() == stored
    assert r.stderr == f"{path}, line 4: not an event, skipped\n"
    text = sf("events", cwd=tmp_path).stdout.splitlines()
    assert text[0].split()[1:] == ["handoff-queued", "name=n0", "to=qa", 'note="a', 'b"']
    assert text[2].endswith('old                counts={"a":1} l=x,y')
    recent = sf("events", "--since", "10m", "--json", cwd=tmp_path).stdout.splitlines()
    assert [json.loads(line)["name"] for line in recent] == ["n0", "n1"]
    since = sf("events", "--since", "2000-01-01T00:00:00Z", "--json", cwd=tmp_path).stdout
    assert len(since.splitlines()) == 3
    bad = sf("events", "--since", "yesterday", cwd=tmp_path)
    assert bad.returncode == 1 and "--since yesterday" in bad.stderr
    # With no swarm running, --follow prints what is there and ends.
    follow = sf("events", "--follow", "--json", cwd=tmp_path)
    assert follow.returncode == 0 and len(follow.stdout.splitlines()) == 3
    assert "no swarm is running" in follow.stderr


def test_since_reads_durations_and_iso_times() -> None:
    now = 1_781_532_331.5
    assert since_stamp("10m", now) == "2026-06-15T13:55:31.500000Z"
    assert since_stamp("2h", now) == "2026-06-15T12:05:31.500000Z"
    assert since_stamp("2026-06-15T16:05:31+02:00", now) == "2026-06-15T14:05:31.000000Z"
    assert since_stamp("2026-06-15", now) == "2026-06-15T00:00:00.000000Z"


def test_events_into_head_ends_quietly(tmp_path: Path) -> None:
    fill(tmp_path, 5000)  # more than a pipe holds: the writer meets the closed pipe
    r = subprocess.run(
        f'{VENV_BIN}/swarmforge events | head -1; echo "${{PIPESTATUS[0]}}" >&2',
        shell=True,
        executable="/bin/bash",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert len(r.stdout.splitlines()) == 1 and r.stderr in ("141\n", "0\n")


def test_forever_follows_until_interrupted(tmp_path: Path) -> None:
    fill(tmp_path, 1)
    follower = subprocess.Popen(
        [SWARMFORGE, "events", "--forever", "--json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert follower.stdout is not None
    assert json.loads(follower.stdout.readline())["name"] == "n0"
    events.emit(str(tmp_path), "later", {"n": 1})
    assert json.loads(follower.stdout.readline())["kind"] == "later"
    follower.send_signal(signal.SIGINT)
    _, err = follower.communicate(timeout=10)
    assert follower.returncode == 130 and err == ""


# -- concurrent writers killed ----------------------------------------------------------------

WRITER = """
import sys
from swarmforge import events
log = events.EventLog(sys.argv[1])
me = sys.argv[2]
i = 0
while True:
    # Lines of 100 bytes to 9 KB: the long ones span pages, where a kill can cut a write.
    size = (i * 7919) % 20
    log.emit("w", {"writer": me, "i": i, "parts": ["p" * 450] * size, "size": size})
    if i == 0:
        print(flush=True)  # writing: from now on a kill lands among writes
    i += 1
"""


@pytest.mark.slow
def test_writers_killed_at_random_never_show_readers_a_torn_event(tmp_path: Path) -> None:
    (tmp_path / ".swarmforge").mkdir()
    path = events.log_path(str(tmp_path))
    rng = random.Random(11)
    seen: list[dict[str, object]] = []
    done = threading.Event()

    def follow() -> None:
        offset = lines = 0
        while not done.is_set():
            chunk = eventread.read(path, offset, lines)
            seen.extend(chunk.events)
            offset, lines = chunk.end, chunk.lines
            time.sleep(0.001)
        seen.extend(eventread.read(path, offset, lines).events)

    reader = threading.Thread(target=follow)
    reader.start()
    try:
        for round_ in range(15):
            writers = [
                subprocess.Popen(
                    [sys.executable, "-c", WRITER, str(tmp_path), f"{round_}.{n}"],
                    stdout=subprocess.PIPE,
                )
                for n in range(4)
            ]
            for w in writers:  # each has written, however long it took to start
                assert w.stdout is not None and w.stdout.readline() == b"\n"
            time.sleep(rng.uniform(0.15, 0.4))
            for w in writers:
                w.send_signal(signal.SIGKILL)
            for w in writers:
                w.communicate()
    finally:
        done.set()
        reader.join()
    final = eventread.read(path)
    assert len(final.events) > 1000
    for got in (seen, final.events):
        last: dict[object, int] = {}
        for event in got:
            assert event["kind"] == "w" and set(event) == {
                "ts",
                "kind",
                "writer",
                "i",
                "parts",
                "size",
            }
            assert event["parts"] == ["p" * 450] * int(event["size"])  # type: ignore[call-overload]
            assert int(event["i"]) > last.get(event["writer"], -1)  # type: ignore[call-overload]
            last[event["writer"]] = int(event["i"])  # type: ignore[call-overload]
    assert seen == final.events


def test_an_empty_log_says_so(project: Project) -> None:
    r = sf("events", cwd=project.root)
    log = statedir.path(str(project.root), EVENTS_LOG)  # named where it lies
    assert (r.returncode, r.stdout, r.stderr) == (0, "", f"no events in {log}\n")
    assert sf("events", "--json", cwd=project.root).stderr == ""  # JSON Lines: nothing at all


def test_follow_follows_a_session_resumed_after_a_down_and_ends_with_its_next_down(
    repo: Path,
) -> None:
    make_swarm(repo, "window lint exec lint task true\n")
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0
    assert sf("down", cwd=repo).returncode == 0
    assert sf("up", "--backend", "headless", cwd=repo).returncode == 0  # the same run again
    follower = follow(repo)
    try:
        time.sleep(3)  # its first down is in the log: still following the resumed session
        assert follower.poll() is None
    finally:
        assert sf("down", cwd=repo).returncode == 0
    out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0 and err == ""
    downs = [json.loads(line) for line in out.splitlines() if '"swarm-down"' in line]
    assert len(downs) == 2 and json.loads(out.splitlines()[-1])["kind"] == "swarm-down"
