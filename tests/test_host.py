"""The file arrivals every way it can go: inotify, watchdog's own observer, polling."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from watchdog import events
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from swarmforge import host
from swarmforge.daemon.arrivals import Arrivals, wakes
from tests.support import retry_until

WAYS = [
    pytest.param(
        {"inotify": True},
        id="inotify",
        marks=pytest.mark.skipif(not host.HAS_INOTIFY, reason="no inotify here"),
    ),
    pytest.param({"inotify": False}, id="observer"),  # FSEvents on macOS, inotify on Linux
    pytest.param({"inotify": False, "native": False}, id="polling"),
]


def test_the_observer_is_watchdogs_choice_or_one_that_polls() -> None:
    assert type(host.observer()) is type(Observer())  # whatever watchdog picked here
    polling = host.observer(native=False)
    assert isinstance(polling, PollingObserver) and polling.timeout == host.POLL_SECONDS


@pytest.mark.parametrize(
    ("event", "wake"),
    [
        (events.FileCreatedEvent("/o/x"), True),
        (events.FileMovedEvent("/o/tmp/x", "/o/x"), True),
        (events.FileClosedEvent("/o/x"), True),
        (events.DirDeletedEvent("/o"), True),
        (events.FileDeletedEvent("/o/x"), False),  # the daemon archived or claimed it
        (events.FileModifiedEvent("/d/handoffd.log"), False),
        (events.DirModifiedEvent("/o"), False),
        (events.FileOpenedEvent("/o/x"), False),
        (events.FileClosedNoWriteEvent("/o/x"), False),
    ],
)
def test_only_what_may_be_an_arrival_wakes(event: events.FileSystemEvent, wake: bool) -> None:
    assert wakes(event) is wake


def arrive(directory: Path, name: str) -> None:
    """Publish a file the way senders do: written aside, then renamed in."""
    aside = directory.parent / f".{name}.tmp"
    aside.write_text("x")
    aside.rename(directory / name)


@pytest.mark.parametrize("way", WAYS)
def test_an_arrival_in_a_watched_directory_wakes_every_way(
    tmp_path: Path, way: dict[str, bool]
) -> None:
    changed = threading.Event()
    arrivals = Arrivals(changed, **way)
    arrivals.start()
    try:
        first, second = tmp_path / "a" / "new", tmp_path / "b" / "new"
        arrivals.watch([str(first)])
        assert first.is_dir()  # created to be watched
        arrive(first, "one")
        retry_until(changed.is_set)
        changed.clear()
        # The set changes: the new directory is watched from then on.
        arrivals.watch([str(second)])
        assert arrivals.watched == {str(second)}
        arrive(second, "two")
        retry_until(changed.is_set)
        changed.clear()
        # A watched directory that goes away wakes too: the daemon rescans.
        (second / "two").unlink()
        second.rmdir()
        retry_until(changed.is_set)
    finally:
        arrivals.stop()
