"""The code style gates run with the suite, so CI enforces them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLS = Path(sys.executable).parent


@pytest.mark.parametrize(
    "argv", [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["mypy"]]
)
def test_tool_passes(argv: list[str]) -> None:
    result = subprocess.run(
        [str(TOOLS / argv[0]), *argv[1:]], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
