"""The `swarmforge` command around the helpers."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from swarmforge import __version__
from swarmforge.cli import parser
from swarmforge.handoff import message
from swarmforge.handoff.mailbox import Box
from tests.support import BIN, SWARMFORGE, Project, run_cli, script_env


def sf(*args: str, cwd: Path, role: str | None = "coder") -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, role=role, timeout=60)


def test_help_and_version(tmp_path: Path) -> None:
    r = sf("--help", cwd=tmp_path)
    assert r.returncode == 0 and "handoff" in r.stdout and "ready" in r.stdout
    assert sf("--version", cwd=tmp_path).stdout == f"swarmforge {__version__}\n"
    r = sf("ready", "--help", cwd=tmp_path)
    assert r.returncode == 0 and "--mode" in r.stdout and "--json" in r.stdout
    assert sf(cwd=tmp_path).returncode == 1


def choices(built: argparse.ArgumentParser) -> list[str]:
    actions = [a for a in built._actions if isinstance(a, argparse._SubParsersAction)]
    return list(actions[0].choices)


def test_the_parser_lists_every_command_with_the_module_that_adds_it() -> None:
    # A command builds only its own module's parser: the tables must say each truly.
    assert choices(parser.build()) == list(parser.PUBLIC)
    assert choices(parser.build_internal()) == list(parser.INTERNAL)
    for table, add in ((parser.PUBLIC, "add"), (parser.INTERNAL, "add_internal")):
        for module in {m for m in table.values() if m is not None}:
            alone = argparse.ArgumentParser()
            sub = alone.add_subparsers()
            getattr(importlib.import_module(f"swarmforge.cli.{module}"), add)(sub)
            assert list(sub.choices) == [n for n, m in table.items() if m == module], module


@pytest.mark.parametrize("command", ["status", "role-loop"])
def test_a_command_s_help_is_its_own_and_a_mistyped_one_lists_the_public_ones(
    tmp_path: Path, command: str
) -> None:
    r = sf(command, "--help", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith(f"usage: swarmforge {command} ")
    r = sf("statu", cwd=tmp_path)
    assert r.returncode == 2 and "'status', 'gc'" in r.stderr and "role-loop" not in r.stderr


def test_python_m_swarmforge(project: Project) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "swarmforge", "ready", "--mode", "batch"],
        cwd=project.tree("qa"),
        env=script_env("qa"),
        capture_output=True,
        text=True,
    )
    assert (r.returncode, r.stdout) == (0, "NO_TASK\n")


def test_bad_helper_arguments(project: Project) -> None:
    r = sf("ready", "--mode", "weekly", cwd=project.tree("coder"))
    assert (r.returncode, r.stderr) == (1, "--mode must be task or batch, not 'weekly'.\n")
    r = sf("done", "--colour", cwd=project.tree("coder"))
    assert r.returncode == 1 and r.stderr.startswith("Unexpected argument: --colour\n")
    r = sf("handoff", cwd=project.tree("coder"))
    assert r.returncode == 1 and r.stderr.startswith("Usage: swarm_handoff.sh <draft-file>")


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    # `true` reads nothing and exits at once, so every write meets a closed pipe.
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{SWARMFORGE}' init --pack list | true"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in r.stderr and r.stderr == ""
    assert r.returncode in (0, 141)  # 0 when the output fitted in the pipe before it closed


def test_a_helper_whose_reader_leaves_early_gets_no_traceback(project: Project) -> None:
    for n in range(40):
        note = message.Handoff([("from", "coder"), ("priority", "50")], "x" * 4000 + "\n")
        path = project.box("qa", Box.NEW) / f"50_{n:03d}.handoff"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(note.render())
    # A batch of 40 items of 4 KB each: more than a pipe holds, so writes meet a closed pipe.
    script = BIN / "ready_for_next_batch.sh"
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{script}' | true"],
        cwd=project.tree("qa"),
        env=script_env("qa"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (r.returncode, r.stderr) == (141, "")
