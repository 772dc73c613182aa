"""Watches on directory trees, every way they can go: inotify, watchdog's observer, polling.

A watch reports paths in the order they changed, so a path not reported by the time
a later change is reported was never reported: each test ends what it checks for
silence with a change that must be reported (`mark`).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmforge import host
from swarmforge.treewatch import TreeWatch, within
from tests.support import retry_until

# watchdog's own observer, adding the watch of a directory made while it walks the tree,
# may add it twice and warn: its business, and harmless.
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

WAYS = [
    pytest.param(
        {"inotify": True},
        id="inotify",
        marks=pytest.mark.skipif(not host.HAS_INOTIFY, reason="no inotify here"),
    ),
    pytest.param({"inotify": False}, id="observer"),  # FSEvents on macOS, inotify on Linux
    pytest.param({"inotify": False, "native": False}, id="polling"),
]


class Seen:
    """The paths a watch reported, in order."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, path: str) -> None:
        with self.lock:
            self.paths.append(path)

    def has(self, path: Path) -> bool:
        with self.lock:
            return str(path) in self.paths

    def under(self, path: Path) -> list[str]:
        with self.lock:
            return [p for p in self.paths if within(p, str(path))]

    def clear(self) -> None:
        with self.lock:
            self.paths.clear()


def skipped(path: str) -> bool:
    name = Path(path).name
    return name in ("logs", ".git") or name.endswith(".lock")


@pytest.fixture(params=WAYS)
def watched(request: pytest.FixtureRequest) -> Iterator[tuple[TreeWatch, Seen]]:
    seen = Seen()
    watch = TreeWatch(seen, skipped, **request.param)
    watch.start()
    try:
        yield watch, seen
    finally:
        watch.stop()


def mark(seen: Seen, where: Path, name: str = "mark") -> None:
    """A change that must be reported: once it is, everything before it was too."""
    (where / name).write_text("x")
    retry_until(lambda: seen.has(where / name))


def test_a_write_anywhere_in_a_tree_is_reported_and_a_read_is_not(
    tmp_path: Path, watched: tuple[TreeWatch, Seen]
) -> None:
    watch, seen = watched
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "old.txt").write_text("old")
    assert watch.watch([str(tree)]) and watch.complete
    assert not watch.watch([str(tree)])  # the same trees: nothing to do

    (tree / "a" / "b" / "old.txt").read_text()
    mark(seen, tree / "a")
    assert not seen.has(tree / "a" / "b" / "old.txt")
    (tree / "a" / "b" / "new.txt").write_text("new")
    retry_until(lambda: seen.has(tree / "a" / "b" / "new.txt"))
    # A directory made after the watch began is watched too, and what it holds.
    (tree / "c" / "d").mkdir(parents=True)
    retry_until(lambda: seen.has(tree / "c"))
    mark(seen, tree / "c" / "d")
    seen.clear()
    (tree / "c" / "d" / "mark").unlink()  # a deletion is a change too
    retry_until(lambda: seen.has(tree / "c" / "d" / "mark"))


def test_what_skip_names_is_never_reported(tmp_path: Path, watched: tuple[TreeWatch, Seen]) -> None:
    watch, seen = watched
    tree = tmp_path / "tree"
    (tree / "logs" / "deep").mkdir(parents=True)
    watch.watch([str(tree)])
    (tree / "logs" / "deep" / "role.log").write_text("output")
    (tree / "logs" / "role.log").write_text("output")
    (tree / "state.lock").write_text("")
    mark(seen, tree)
    assert set(seen.under(tree)) == {str(tree / "mark")}


def test_a_tree_that_does_not_exist_yet_is_waited_for_and_again_when_it_goes(
    tmp_path: Path, watched: tuple[TreeWatch, Seen]
) -> None:
    watch, seen = watched
    tree = tmp_path / "later" / "tree"
    watch.watch([str(tree)])
    (tmp_path / "unrelated").write_text("x")  # beside the tree, not in it
    tree.mkdir(parents=True)
    retry_until(lambda: bool(seen.under(tmp_path / "later")))
    assert not seen.has(tmp_path / "unrelated")
    mark(seen, tree)
    seen.clear()
    shutil.rmtree(tree)
    retry_until(lambda: seen.has(tree))  # gone: reported, and waited for again
    seen.clear()
    tree.mkdir()
    retry_until(lambda: seen.has(tree))  # what it held before it was watched: in a read
    mark(seen, tree, "again")


def test_a_moved_directory_is_watched_where_it_lands(
    tmp_path: Path, watched: tuple[TreeWatch, Seen]
) -> None:
    watch, seen = watched
    tree = tmp_path / "tree"
    (tree / "from" / "inner").mkdir(parents=True)
    watch.watch([str(tree)])
    (tree / "from").rename(tree / "to")
    retry_until(lambda: seen.has(tree / "to"))
    mark(seen, tree / "to" / "inner")


def test_other_trees_replace_the_old_ones(tmp_path: Path, watched: tuple[TreeWatch, Seen]) -> None:
    watch, seen = watched
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    watch.watch([str(first)])
    mark(seen, first)
    assert watch.watch([str(second)])
    (first / "after").write_text("x")
    mark(seen, second)
    assert not seen.has(first / "after")


def test_trees_may_nest_where_one_skips_what_the_other_watches(
    tmp_path: Path, watched: tuple[TreeWatch, Seen]
) -> None:
    watch, seen = watched
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "logs"
    inner.mkdir(parents=True)
    watch.watch([str(outer), str(inner)])  # outer skips logs/; inner is logs/ itself
    mark(seen, inner)
    mark(seen, outer)
