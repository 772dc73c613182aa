"""Finding the real agent CLIs (claude, codex) that `setup.sh` installs for the tests.

A test that needs one skips when it is missing, with the reason, except in CI
(`CI` set), where a missing CLI is a failure: CI must never skip these tests.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import NoReturn

import pytest

VENV_BIN = os.path.dirname(sys.executable)


def require_cli(name: str) -> str:
    """The absolute path of command `name` (an agent CLI, chromium); skips (or, in CI,
    fails) the test without it."""
    found = shutil.which(name, path=VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    if found is None:
        unavailable(f"{name} is not installed (./setup.sh installs it)")
    return found


def unavailable(reason: str) -> NoReturn:
    """Skip the test for `reason`, or fail it in CI, where everything must be installed."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)
