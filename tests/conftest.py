from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

from tests.realagents import LiveSwarm, require_cli
from tests.support import Project, copy_tree, make_template, nothing_left

# Keep Python's bytecode cache on for the suite even where PYTHONDONTWRITEBYTECODE is set:
# without it each test worker rewrites every test module anew, and each of the hundreds of
# swarmforge processes the tests start compiles the package anew (measured: 40% of the
# default run's CPU time on a fresh clone).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture(scope="session", autouse=True)
def interruptible() -> None:
    """Children start with Ctrl-C's default action, as from a terminal.

    A suite started as a background job of a non-interactive shell (`pytest &`) inherits
    SIGINT ignored, and passes that on to every command it starts; the tests that stop a
    command as Ctrl-C does would then wait in vain. A handler of our own is reset to the
    default in a child, as an ignored signal is not.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("template") / "repo")


@pytest.fixture
def repo(template_repo: Path, tmp_path: Path) -> Path:
    return copy_tree(template_repo, tmp_path / "project")


@pytest.fixture
def project(repo: Path) -> Project:
    """coder and cleaner in task mode, qa in batch mode, each in its own worktree."""
    return Project(repo, {"coder": "task", "cleaner": "task", "qa": "batch"})


@pytest.fixture
def live(repo: Path, tmp_path: Path) -> Iterator[LiveSwarm]:
    """A swarm of real agents in tmux against a scripted model, ended after the test."""
    require_cli("claude")
    require_cli("codex")
    swarm = LiveSwarm(repo, tmp_path / "homes")
    try:
        yield swarm
    finally:
        swarm.down()
    nothing_left(repo)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium, driven by Playwright, one per test module."""
    from playwright.sync_api import sync_playwright

    chromium = require_cli("chromium")
    with sync_playwright() as play:
        launched = play.chromium.launch(executable_path=chromium)
        yield launched
        launched.close()
