"""The one polling loop (waiting.py)."""

from __future__ import annotations

import time

from swarmforge.waiting import wait_until


def test_a_condition_that_holds_is_asked_once_and_nothing_is_waited() -> None:
    asked = []
    started = time.monotonic()
    assert wait_until(lambda: asked.append(1) is None, timeout=120.0, interval=60.0)
    assert asked == [1] and time.monotonic() - started < 30  # not one interval waited


def test_it_polls_until_the_condition_holds() -> None:
    asked = []

    def third_time() -> bool:
        asked.append(1)
        return len(asked) == 3

    assert wait_until(third_time, timeout=5.0, interval=0.01)
    assert len(asked) == 3


def test_it_gives_up_when_time_is_up_having_asked_again_and_again() -> None:
    asked = []
    started = time.monotonic()
    assert not wait_until(lambda: bool(asked.append(1)), timeout=0.2, interval=0.02)
    assert 0.2 <= time.monotonic() - started < 2.0
    assert len(asked) >= 3


def test_with_no_time_to_wait_the_condition_is_still_asked() -> None:
    assert wait_until(lambda: True, timeout=0.0)
    asked = []
    assert not wait_until(lambda: bool(asked.append(1)), timeout=0.0, interval=0.0)
    assert asked
