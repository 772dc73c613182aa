"""The one way swarmforge writes and reads an instant (times.py)."""

from __future__ import annotations

import time

import pytest

from swarmforge import times

INSTANT = 1_781_532_331  # 2026-06-15T14:05:31Z


def test_each_form_is_utc_and_says_so() -> None:
    assert times.stamp(INSTANT + 0.9) == "2026-06-15T14:05:31Z"
    assert times.compact(INSTANT + 0.9) == "20260615T140531Z"
    assert times.compact(INSTANT + 0.25, micro=True) == "20260615T140531250000Z"
    assert times.precise(INSTANT * 10**9 + 42_000) == "2026-06-15T14:05:31.000042Z"
    assert times.stamp(0) == "1970-01-01T00:00:00Z"


def test_without_an_instant_each_form_is_now() -> None:
    before = int(time.time())
    for made in (times.stamp(), times.compact(), times.precise()):
        assert before <= times.parse(made) <= time.time() + 1


def test_every_written_form_parses_back_to_its_instant() -> None:
    for text in (
        times.stamp(INSTANT),
        times.compact(INSTANT),
        times.precise(INSTANT * 10**9),
        "2026-06-15T14:05:31.000Z",  # a run's journal (run/fields.py)
    ):
        assert times.parse(text) == INSTANT, text
    assert times.parse(times.precise(INSTANT * 10**9 + 123_456_000)) == INSTANT + 0.123456
    assert times.parse(times.compact(INSTANT + 0.5, micro=True)) == INSTANT + 0.5


def test_an_instant_without_a_zone_is_utc_and_one_with_an_offset_keeps_it() -> None:
    assert times.parse("2026-06-15T14:05:31") == INSTANT
    assert times.parse("2026-06-15T16:05:31+02:00") == INSTANT
    assert times.parse("2026-06-15") == INSTANT - (14 * 3600 + 5 * 60 + 31)


@pytest.mark.parametrize("text", ["", "yesterday", "2026-06-15T14:05:31Zjunk", "2026-13-01"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        times.parse(text)


def test_stamps_sort_as_time() -> None:
    assert times.precise(10**18) < times.precise(10**18 + 1000)
    assert times.stamp(INSTANT) < times.stamp(INSTANT + 1)
    assert times.compact(INSTANT) < times.compact(INSTANT + 1)
