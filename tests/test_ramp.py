"""Pacing agent starts: the `[start]` caps, the ramp's logic, and `up` ramping for real."""

from __future__ import annotations

import json
import shutil
import time
from itertools import pairwise
from pathlib import Path

import pytest

from swarmforge import times
from swarmforge.agents import hints, lifecycle
from swarmforge.config.settings import parse_settings
from swarmforge.config.startsettings import StartSettings
from swarmforge.errors import CorruptFile
from swarmforge.swarm import pacer, ramp
from swarmforge.swarm.ramp import Ramp, wait_turn
from tests.support import make_swarm, retry_until
from tests.support import run_cli as sf

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Clock:
    """A clock that moves only when something sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _schedule(ramp_: Ramp, clock: Clock, names: list[str]) -> list[tuple[str, float]]:
    """Start `names` one after another through the ramp; when each started."""
    out = []
    for name in names:
        wait_turn(ramp_, clock.sleep)
        ramp_.started(name)
        out.append((name, clock.now))
    return out


# -- settings ---------------------------------------------------------------------------------


def test_start_settings_have_defaults_and_read_the_file() -> None:
    assert parse_settings(b"", "s.toml").start == StartSettings(max_parallel=4, per_minute=12)
    text = b"[start]\nmax_parallel = 3\nper_minute = 6\n"
    assert parse_settings(text, "s.toml").start == StartSettings(max_parallel=3, per_minute=6)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("max_parallel = 0", "start.max_parallel"),
        ("per_minute = -2", "start.per_minute"),
        ("per_minute = 1.5", "start.per_minute"),
        ('max_parallel = "3"', "start.max_parallel"),
        ("max_parallel = true", "start.max_parallel"),
        ("at_once = 3", "start.at_once"),
    ],
)
def test_bad_start_settings_name_the_file_and_the_key(text: str, key: str) -> None:
    with pytest.raises(CorruptFile) as caught:
        parse_settings(f"[start]\n{text}\n".encode(), "swarmforge/swarmforge.toml")
    assert "swarmforge/swarmforge.toml" in str(caught.value)
    assert key in str(caught.value)


# -- the pacing logic -------------------------------------------------------------------------


def test_no_more_than_max_parallel_agents_start_at_once() -> None:
    clock = Clock()
    r = Ramp(2, 100, window=10, clock=clock)
    starts = _schedule(r, clock, ["a", "b", "c", "d", "e"])
    assert starts == [("a", 0), ("b", 0), ("c", 10), ("d", 10), ("e", 20)]


def test_no_more_than_per_minute_starts_in_any_sliding_minute() -> None:
    clock = Clock()
    r = Ramp(10, 2, window=1, clock=clock)
    r.started("a")
    clock.now = 5
    r.started("b")
    assert r.delay() == 55 and r.holding() == "per_minute 2"
    starts = _schedule(r, clock, ["c", "d", "e"])
    # Each waits until the start two before it is a minute old.
    assert starts == [("c", 60), ("d", 65), ("e", 120)]


def test_both_caps_together_keep_every_window_within_bounds_and_the_order() -> None:
    clock = Clock()
    r = Ramp(2, 3, window=10, clock=clock)
    names = [f"agent{i}" for i in range(9)]
    starts = _schedule(r, clock, names)
    assert [name for name, _ in starts] == names
    assert [at for _, at in starts] == [0, 0, 10, 60, 60, 70, 120, 120, 130]
    times = [at for _, at in starts]
    for t in times:
        assert sum(1 for s in times if t <= s < t + 60) <= 3
        assert sum(1 for s in times if s <= t < s + 10) <= 2


def test_a_quick_agent_that_settles_frees_its_slot_at_once() -> None:
    clock = Clock()
    r = Ramp(1, 100, window=10, clock=clock)
    r.started("quick")
    told: list[tuple[float, str]] = []
    wait_turn(r, clock.sleep, lambda name: name == "quick", lambda d, cap: told.append((d, cap)))
    assert clock.now == 0 and told == [] and r.starting() == []
    r.started("slow")
    wait_turn(r, clock.sleep, lambda name: False, lambda d, cap: told.append((d, cap)))
    assert clock.now == 10 and told == [(10, "max_parallel 1")]


def test_a_slot_frees_when_the_agent_settles_while_waiting() -> None:
    clock = Clock()
    r = Ramp(1, 100, window=10, clock=clock)
    r.started("a")
    wait_turn(r, clock.sleep, lambda name: clock.now >= 2)
    assert clock.now == 2


def test_the_progress_line_says_how_far_and_why() -> None:
    line = pacer.progress_line(3, 12, 6.2, "per_minute 6")
    assert line == "started 3 of 12 agents; next in 7 s (per_minute 6)"


def test_an_agent_settles_once_it_speaks_or_exits_after_its_start(tmp_path: Path) -> None:
    root, since = str(tmp_path), time.time()
    assert not pacer.agent_settled(root, "r1", "coder", since)
    hints.write_hint(root, "coder", "idle", "claude Stop", when=since - 5)
    assert not pacer.agent_settled(root, "r1", "coder", since)  # said before this start
    hints.write_hint(root, "coder", "idle", "claude Stop", when=since + 1)
    assert pacer.agent_settled(root, "r1", "coder", since)
    lifecycle.started(root, "qa", "r1", 123, 0)
    assert not pacer.agent_settled(root, "r1", "qa", since)
    lifecycle.exited(root, "qa", "r1", 3, [], "never", 5)
    assert pacer.agent_settled(root, "r1", "qa", since)
    assert not pacer.agent_settled(root, "r2", "qa", since)  # another run's record


# -- `up`, for real ---------------------------------------------------------------------------

# An agent that is done starting after a moment: it says so as claude's Stop hook would.
QUICK_AGENT = """#!/bin/sh
sleep DELAY
echo '{"hook_event_name": "Stop"}' | swarmforge agent-state --agent claude
exec sleep 300
"""


def _swarm(repo: Path, agents: int, toml: str, delay: float = 0.5) -> Path:
    conf = "".join(f"window a{i} ./agent.sh master\n" for i in range(agents))
    conf += "window tests exec tests batch true\n"
    make_swarm(repo, conf, {"agent.sh": QUICK_AGENT.replace("DELAY", str(delay))})
    for i in range(agents):
        (repo / "swarmforge" / "roles" / f"a{i}.prompt").write_text("Work.\n")
    (repo / "swarmforge" / "swarmforge.toml").write_text(toml)
    return repo


def _agent_starts(repo: Path) -> list[tuple[str, float]]:
    """Each agent-started event's role and time, in the order of the log."""
    out = []
    for line in (repo / ".swarmforge" / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("kind") == "agent-started" and str(event["role"]).startswith("a"):
            out.append((str(event["role"]), times.parse(str(event["ts"]))))
    return out


def _up_and_starts(repo: Path, backend: str, agents: int) -> tuple[str, list[tuple[str, float]]]:
    try:
        r = sf("up", "--backend", backend, "--stagger", "0", cwd=repo)
        assert r.returncode == 0, r.stderr
        starts = _agent_starts(repo)
        deadline = time.monotonic() + 10
        while len(starts) < agents and time.monotonic() < deadline:
            time.sleep(0.1)
            starts = _agent_starts(repo)
    finally:
        assert sf("down", cwd=repo).returncode == 0
    return r.stderr, starts


@pytest.mark.slow
@needs_tmux
def test_up_starts_one_agent_at_a_time_each_after_the_last_settled(repo: Path) -> None:
    _swarm(repo, 3, "[start]\nmax_parallel = 1\n")
    stderr, starts = _up_and_starts(repo, "tmux", 3)
    assert [name for name, _ in starts] == ["a0", "a1", "a2"]
    times = [at for _, at in starts]
    # Each waited for the one before it to speak, half a second after its start, and no
    # longer than the 10 s window.
    assert all(0.5 <= b - a < ramp.START_WINDOW for a, b in pairwise(times))
    assert "started 1 of 3 agents; next in 10 s (max_parallel 1)" in stderr
    assert "started 2 of 3 agents; next in 10 s (max_parallel 1)" in stderr
    assert "started tmux session swarmforge-tests" in stderr  # the exec role, never paced


@pytest.mark.slow
def test_the_headless_runner_paces_its_agents_and_up_says_so(repo: Path) -> None:
    # Slow enough to speak that `up` sees the first start before the agent settles.
    _swarm(repo, 2, "[start]\nmax_parallel = 1\n", delay=1.5)
    stderr, starts = _up_and_starts(repo, "headless", 2)
    assert [name for name, _ in starts] == ["a0", "a1"]
    assert 1.5 <= starts[1][1] - starts[0][1] < ramp.START_WINDOW
    assert "started 1 of 2 agents; next in" in stderr


@pytest.mark.slow
@needs_tmux
def test_up_keeps_to_per_minute_across_a_real_minute(repo: Path) -> None:
    _swarm(repo, 3, "[start]\nper_minute = 2\n")
    # The first start came after this, however long its agent then took to say it began
    # (the third may say so sooner): the third agent's word comes a minute after this.
    before = time.time()
    stderr, starts = _up_and_starts(repo, "tmux", 3)
    times = [at for _, at in starts]
    assert len(times) == 3 and times[2] - before >= 59.5
    assert "started 2 of 3 agents; next in" in stderr and "(per_minute 2)" in stderr


# An agent that writes when it began and when it is done starting, then says so.
TIMED_AGENT = """#!/bin/sh
echo "$SWARMFORGE_ROLE start $(date +%s.%N)" >> "$SWARMFORGE_PROJECT/starts.log"
sleep 0.5
echo "$SWARMFORGE_ROLE settled $(date +%s.%N)" >> "$SWARMFORGE_PROJECT/starts.log"
echo '{"hook_event_name": "Stop"}' | swarmforge agent-state --agent claude
exec sleep 300
"""


@pytest.mark.slow
@needs_tmux
def test_twelve_agents_under_a_cap_of_three_never_overlap_more_than_three(repo: Path) -> None:
    _swarm(repo, 12, "[start]\nmax_parallel = 3\nper_minute = 60\n")
    (repo / "agent.sh").write_text(TIMED_AGENT)  # the roles run it from the main checkout
    log = repo / "starts.log"
    try:
        r = sf("up", "--backend", "tmux", "--stagger", "0", cwd=repo)
        assert r.returncode == 0, r.stderr
        # Every agent began and settled (the last ones after `up` returned).
        retry_until(lambda: log.exists() and len(log.read_text().splitlines()) >= 24, 30)
    finally:
        assert sf("down", cwd=repo).returncode == 0
    spans: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        role, _, at = line.split()
        spans.setdefault(role, []).append(float(at))
    assert len(spans) == 12 and all(len(s) == 2 for s in spans.values())
    # At every moment an agent began, how many were between their start and settling.
    for began, _ in spans.values():
        starting = sum(1 for s, e in spans.values() if s <= began <= e)
        assert starting <= 3, spans
    # And the cap was used: more than one at once at some point.
    assert any(sum(1 for s, e in spans.values() if s <= b <= e) > 1 for b, _ in spans.values())
