"""The task graph of a level: statuses, dependency gates, moves, resume, and its invariants."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmforge.run.taskgraph import TERMINAL, TaskGraph

Entry = tuple[str, tuple[str, ...], bool]

# build -> test -> deploy, and lint on its own; deploy is parked.
PIPELINE: list[Entry] = [
    ("build", (), False),
    ("lint", (), False),
    ("test", ("build",), False),
    ("deploy", ("test", "lint"), True),
]


def pipeline() -> TaskGraph:
    return TaskGraph(PIPELINE)


def run(queue: TaskGraph, task_id: str, ok: bool = True) -> None:
    queue.start(task_id)
    queue.finish(task_id, ok)


def test_initial_statuses_follow_park_then_dependencies() -> None:
    queue = pipeline()
    assert queue.statuses() == {
        "build": "ready",
        "lint": "ready",
        "test": "blocked",
        "deploy": "parked",
    }
    assert list(queue.statuses()) == ["build", "lint", "test", "deploy"]
    assert queue.ready() == ["build", "lint"]
    assert queue.depends_on("deploy") == ("test", "lint")
    assert queue.counts() == {
        "blocked": 1,
        "ready": 2,
        "running": 0,
        "done": 0,
        "failed": 0,
        "parked": 1,
    }


def test_a_task_is_ready_only_when_every_dependency_is_done() -> None:
    queue = TaskGraph([("a", (), False), ("b", (), False), ("c", ("a", "b"), False)])
    run(queue, "a")
    assert queue.status("c") == "blocked"
    queue.start("b")
    assert queue.status("c") == "blocked"
    queue.finish("b", True)
    assert queue.ready() == ["c"]


def test_failed_never_satisfies_an_edge() -> None:
    queue = TaskGraph([("a", (), False), ("b", ("a",), False), ("c", ("b",), False)])
    run(queue, "a", ok=False)
    assert queue.statuses() == {"a": "failed", "b": "blocked", "c": "blocked"}
    assert queue.finished()


def test_a_run_moves_to_finished() -> None:
    queue = pipeline()
    assert not queue.finished()
    run(queue, "build")
    run(queue, "lint")
    queue.start("test")
    assert not queue.finished()
    queue.finish("test", True)
    assert queue.finished() and queue.status("deploy") == "parked"
    queue.approve("deploy")
    assert queue.ready() == ["deploy"]
    run(queue, "deploy")
    assert queue.counts()["done"] == 4 and queue.finished()


def test_approving_before_the_dependencies_are_done_blocks_until_they_are() -> None:
    queue = pipeline()
    queue.approve("deploy")
    assert queue.status("deploy") == "blocked"
    run(queue, "build")
    run(queue, "test")
    assert queue.status("deploy") == "blocked"
    run(queue, "lint")
    assert queue.status("deploy") == "ready"


def test_rejecting_fails_a_parked_task_for_good() -> None:
    queue = pipeline()
    queue.reject("deploy")
    assert queue.status("deploy") == "failed"
    with pytest.raises(ValueError, match="cannot approve task 'deploy': it is failed, and that"):
        queue.approve("deploy")


MOVES: dict[str, Callable[[TaskGraph, str], None]] = {
    "start": TaskGraph.start,
    "finish ok": lambda q, t: q.finish(t, True),
    "finish failed": lambda q, t: q.finish(t, False),
    "approve": TaskGraph.approve,
    "reject": TaskGraph.reject,
}


@pytest.mark.parametrize("outcome", [True, False])
@pytest.mark.parametrize("move", list(MOVES))
def test_a_terminal_task_never_moves_again(move: str, outcome: bool) -> None:
    queue = pipeline()
    run(queue, "build", outcome)
    final = queue.status("build")
    with pytest.raises(ValueError, match=f"it is {final}, and that is final"):
        MOVES[move](queue, "build")
    with pytest.raises(ValueError, match=f"cannot restore task 'build': it is {final}"):
        queue.restore({"build": "ready"})
    assert queue.status("build") == final


@pytest.mark.parametrize(
    ("move", "task_id", "message"),
    [
        ("start", "test", "cannot start task 'test': it is blocked, not ready"),
        ("start", "deploy", "cannot start task 'deploy': it is parked, not ready"),
        ("finish ok", "build", "cannot finish task 'build': it is ready, not running"),
        ("approve", "build", "cannot approve task 'build': it is ready, not parked"),
        ("reject", "test", "cannot reject task 'test': it is blocked, not parked"),
    ],
)
def test_moves_the_status_does_not_allow_are_refused(move: str, task_id: str, message: str) -> None:
    queue = pipeline()
    before = queue.statuses()
    with pytest.raises(ValueError) as caught:
        MOVES[move](queue, task_id)
    assert str(caught.value) == message
    assert queue.statuses() == before


def test_a_running_task_cannot_start_twice() -> None:
    queue = pipeline()
    queue.start("build")
    with pytest.raises(ValueError, match="it is running, not ready"):
        queue.start("build")


def test_unknown_ids_are_key_errors() -> None:
    queue = pipeline()
    for call in (queue.status, queue.start, queue.approve, queue.depends_on):
        with pytest.raises(KeyError, match="unknown task 'nope'"):
            call("nope")


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ([("a", (), False), ("a", (), False)], "duplicate task id 'a'"),
        ([("a", ("b",), False)], "task 'a' cannot depend on 'b'"),
        ([("a", ("a",), False)], "task 'a' cannot depend on 'a'"),
    ],
)
def test_a_queue_refuses_an_impossible_graph(tasks: list[Entry], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        TaskGraph(tasks)
    assert str(caught.value) == message


def test_demote_running_readies_the_orphans_in_task_order() -> None:
    queue = pipeline()
    queue.start("lint")
    queue.start("build")
    assert queue.demote_running() == ["build", "lint"]
    assert queue.ready() == ["build", "lint"]
    assert queue.demote_running() == []


def test_restore_takes_states_from_a_record_and_unblocks() -> None:
    queue = pipeline()
    queue.restore({"build": "done", "lint": "running"})
    assert queue.statuses() == {
        "build": "done",
        "lint": "running",
        "test": "ready",
        "deploy": "parked",
    }
    queue.restore({"deploy": "blocked", "lint": "done", "test": "done"})
    assert queue.status("deploy") == "ready"


def test_restore_may_repeat_a_terminal_status() -> None:
    queue = pipeline()
    queue.restore({"build": "failed"})
    queue.restore({"build": "failed"})
    assert queue.status("build") == "failed" and queue.status("test") == "blocked"


@pytest.mark.parametrize(
    ("states", "message"),
    [
        ({"nope": "done"}, "cannot restore unknown task 'nope'"),
        ({"build": "finished"}, "cannot restore task 'build': unknown status 'finished'"),
        ({"test": "ready"}, "cannot restore task 'test' as ready: its dependency 'build' is ready"),
        (
            {"build": "failed", "test": "done"},
            "cannot restore task 'test' as done: its dependency 'build' is failed",
        ),
        (
            {"build": "running", "test": "running"},
            "cannot restore task 'test' as running: its dependency 'build' is running",
        ),
    ],
)
def test_restore_refuses_a_record_that_contradicts_itself(
    states: dict[str, str], message: str
) -> None:
    queue = pipeline()
    before = queue.statuses()
    with pytest.raises(ValueError) as caught:
        queue.restore(states)
    assert str(caught.value) == message
    assert queue.statuses() == before


# -- invariants over random graphs and outcomes -----------------------------------------------


@st.composite
def graphs(draw: st.DrawFn) -> list[Entry]:
    """A random DAG in task order: each task depends on a few earlier ones."""
    size = draw(st.integers(min_value=1, max_value=12))
    tasks: list[Entry] = []
    for n in range(size):
        earlier = [f"t{m}" for m in range(n)]
        deps = draw(st.lists(st.sampled_from(earlier), max_size=3, unique=True)) if n else []
        tasks.append((f"t{n}", tuple(deps), draw(st.booleans())))
    return tasks


def check(queue: TaskGraph, before: dict[str, str]) -> None:
    """The invariants that hold after every move."""
    now = queue.statuses()
    for task_id, status in now.items():
        deps = queue.depends_on(task_id)
        if status in ("ready", "running", "done"):
            assert all(now[dep] == "done" for dep in deps), (task_id, now)
        if status == "blocked":
            assert not all(now[dep] == "done" for dep in deps), (task_id, now)
        if before[task_id] in TERMINAL:
            assert status == before[task_id]
    assert sum(queue.counts().values()) == len(now)
    assert queue.finished() == (not queue.ready() and "running" not in now.values())


def resumed(queue: TaskGraph, tasks: list[Entry]) -> TaskGraph:
    """What a restart makes of the queue: a fresh one, restored, its orphans demoted."""
    fresh = TaskGraph(tasks)
    fresh.restore(queue.statuses())
    orphans = fresh.demote_running()
    expected = {t: "ready" if s == "running" else s for t, s in queue.statuses().items()}
    assert fresh.statuses() == expected
    assert orphans == [t for t, s in queue.statuses().items() if s == "running"]
    return fresh


KINDS = {"ready": ("start",), "running": ("finish",), "parked": ("approve", "reject")}
MAX_CRASHES = 3


def step(queue: TaskGraph, data: st.DataObject, crash: bool) -> str:
    """One random move (start, finish, decide a parked task) or a crash; returns its kind."""
    choices = [(kind, t) for t, s in queue.statuses().items() for kind in KINDS.get(s, ())]
    kind, task_id = data.draw(st.sampled_from([*choices, *([("crash", "")] if crash else [])]))
    if kind == "finish":
        queue.finish(task_id, data.draw(st.booleans(), label=f"{task_id} ok"))
    elif kind != "crash":
        getattr(queue, kind)(task_id)
    return kind


@settings(max_examples=150, deadline=None)
@given(tasks=graphs(), data=st.data())
def test_random_runs_keep_the_gate_and_always_finish(
    tasks: list[Entry], data: st.DataObject
) -> None:
    queue = TaskGraph(tasks)
    check(queue, queue.statuses())
    crashes = moves = 0
    while not queue.finished() or "parked" in queue.statuses().values():
        before = queue.statuses()
        if step(queue, data, crash=crashes < MAX_CRASHES) == "crash":
            crashes += 1
            queue = resumed(queue, tasks)
        check(queue, before)
        moves += 1
        # Three moves per task (parked -> ready -> running -> final), two more per orphan.
        assert moves <= 3 * len(tasks) + crashes * (2 * len(tasks) + 1)
    final = queue.statuses()
    for task_id, deps, parked in tasks:
        if any(final[dep] == "failed" for dep in deps):
            # Behind a failed task: still waiting, or failed only by a rejection.
            assert final[task_id] == "blocked" or (parked and final[task_id] == "failed")


@settings(max_examples=100, deadline=None)
@given(tasks=graphs(), outcomes=st.lists(st.booleans(), min_size=12, max_size=12))
def test_without_parks_a_run_ends_with_only_done_failed_or_blocked(
    tasks: list[Entry], outcomes: list[bool]
) -> None:
    queue = TaskGraph([(t, d, False) for t, d, _ in tasks])
    while not queue.finished():
        for task_id in queue.ready():
            queue.start(task_id)
            queue.finish(task_id, outcomes[int(task_id[1:])])
    final = queue.statuses()
    assert set(final.values()) <= {"done", "failed", "blocked"}
    for task_id, deps, _ in tasks:
        if final[task_id] == "blocked":
            assert any(final[dep] in ("failed", "blocked") for dep in deps)
        else:
            assert final[task_id] == ("done" if outcomes[int(task_id[1:])] else "failed")
