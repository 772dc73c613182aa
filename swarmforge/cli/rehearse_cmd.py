"""`swarmforge rehearse SCRIPT`: the swarm with the real agent CLIs against a scripted model."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_FAILURE, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from swarmforge.rehearse.rehearsal import Outcome, RoleReport

SHOWN_LINES = 3  # of each command's output


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `rehearse`."""
    from swarmforge.cli.common import project_option

    rehearse = sub.add_parser(
        "rehearse",
        help="run the swarm with the real claude/codex CLIs against a scripted model, offline",
        description="Copy the project to a temporary directory, start its swarm in tmux with "
        "every claude and codex agent talking to a scripted model on loopback (each with a "
        "throw-away home), play each role's scripted turns, stop everything and report. "
        "Exits 0 only if every expectation of the script held.",
    )
    rehearse.add_argument("script", help="the rehearsal script (TOML; `init` writes an example)")
    project_option(rehearse)
    rehearse.add_argument(
        "--backend",
        choices=("tmux", "headless"),
        default="tmux",
        help="agents in tmux sessions (default), or their non-interactive modes, once per task",
    )
    rehearse.add_argument(
        "--keep", action="store_true", help="keep the copy the swarm ran on, and say where"
    )
    rehearse.add_argument("--json", action="store_true", help="print the report as JSON")
    rehearse.set_defaults(handler=_rehearse)


def _rehearse(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root, unwind_on_sigterm
    from swarmforge.projectroot import CONFIG
    from swarmforge.rehearse.rehearsal import rehearse

    # Stopped from outside, a rehearsal still stops its swarm and removes its copy.
    unwind_on_sigterm()

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    outcome = rehearse(
        project_root(ns.project, (CONFIG,)),
        ns.script,
        backend=ns.backend,
        keep=ns.keep,
        progress=say,
    )
    emit(ns.json, {"ok": outcome.ok, **dataclasses.asdict(outcome)}, _outcome_lines(outcome))
    return EXIT_OK if outcome.ok else EXIT_FAILURE


def _outcome_lines(outcome: Outcome) -> Iterator[str]:
    """What each role did, where the copy is kept, and the verdict with every failure."""
    for role, report in outcome.roles.items():
        yield f"{role}:"
        yield from _role_lines(report)
    if outcome.copy:
        yield f"the copy it ran on is kept at {outcome.copy}"
    if outcome.ok:
        yield "rehearsal passed: every expectation held"
        return
    yield "rehearsal FAILED:"
    yield from (f"  {problem}" for problem in outcome.problems)


def _role_lines(report: RoleReport) -> Iterator[str]:
    """Each turn of one role: its prompt's first line, its commands' last output lines."""
    for turn in report.turns:
        opening = turn.prompt.strip().splitlines()[0][:70] if turn.prompt.strip() else ""
        yield f"  turn {turn.number}: {opening}"
        for command, output in zip(turn.commands, turn.outputs, strict=False):
            yield f"    $ {command}"
            yield from (f"      {line}" for line in output.strip().splitlines()[-SHOWN_LINES:])
        if turn.received:
            yield f"    completed handoffs from: {', '.join(turn.received)}"
        if turn.sent:
            yield f"    sent handoffs to: {', '.join(turn.sent)}"
    if report.unscripted_turns:
        yield f"  (+{report.unscripted_turns} message(s) after its script ended)"
