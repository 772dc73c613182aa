"""The agent-facing helpers: `handoff`, `ready` and `done`, as bin/ and `swarmforge` run them.

This is the hot path agents call many times an hour, so it imports nothing
beyond the standard library's cheapest modules until it knows what to do.
"""

from __future__ import annotations

import os
import sys

from swarmforge.errors import EXIT_FAILURE, EXIT_OK, SwarmforgeError

TYPE_CHECKING = False  # typing itself costs milliseconds on this hot path
if TYPE_CHECKING:
    from swarmforge.handoff.printout import Batch, Task

HELPERS = ("handoff", "ready", "done")
USAGE = """usage: swarmforge handoff DRAFT
       swarmforge ready [--mode task|batch] [--json]
       swarmforge done [--mode task|batch] [--json]"""


def _options(args: list[str]) -> tuple[str | None, bool]:
    mode: str | None = None
    as_json = False
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            as_json = True
        elif arg == "--mode" and rest:
            mode = rest.pop(0)
        elif arg.startswith("--mode="):
            mode = arg.partition("=")[2]
        else:
            raise SwarmforgeError(f"Unexpected argument: {arg}", hint=USAGE)
    if mode not in (None, "task", "batch"):
        raise SwarmforgeError(f"--mode must be task or batch, not '{mode}'.")
    return mode, as_json


def _handoff(args: list[str], cwd: str, out: list[str]) -> None:
    from swarmforge.handoff import draft, gate

    if len(args) != 1:
        raise SwarmforgeError(draft.USAGE)
    path = gate.queue_handoff(args[0], cwd=cwd, role=os.environ.get("SWARMFORGE_ROLE", ""))
    out.append(f"HANDOFF QUEUED: {path}\n")


def _receive(command: str, args: list[str], cwd: str, out: list[str]) -> None:
    from swarmforge import roletable
    from swarmforge.cli.common import emit
    from swarmforge.handoff import ready, unreadable
    from swarmforge.handoff.mailbox import Mailbox

    mode, as_json = _options(args)
    if mode is None:
        mode = roletable.receive_mode(cwd, os.environ.get("SWARMFORGE_ROLE", ""))
    box = Mailbox(cwd)
    report: dict[str, object] = {"mode": mode}
    if command == "done":
        from swarmforge.handoff import done

        if mode == "task":
            completed = done.done_task(box)
        else:
            completed, batch_dir = done.done_batch(box)
            report["completed_batch"] = batch_dir
        report["completed"] = completed
        if not as_json:
            out.extend(f"COMPLETED: {p}\n" for p in completed)
            if mode == "batch":
                out.append(f"COMPLETED_BATCH: {batch_dir}\n")
            _flush(out)  # what is done stays reported even if taking the next item fails
    aside: list[unreadable.SetAside] = []
    try:
        work: Task | Batch | None = (
            ready.ready_task(box, aside) if mode == "task" else ready.ready_batch(box, aside)
        )
    finally:
        if aside and not as_json:
            sys.stderr.write("".join(a.line() + "\n" for a in aside))
    if as_json:
        report["set_aside"] = [{"path": a.path, "reason": a.reason} for a in aside]
        report["next"] = None if work is None else work.as_dict()
    emit(as_json, report, _said(work))


def _said(work: Task | Batch | None) -> str:
    from swarmforge.handoff.printout import Task, batch_text, task_text

    if work is None:
        return "NO_TASK"
    # The printouts end with a newline, which emit adds again.
    return (task_text(work) if isinstance(work, Task) else batch_text(work)).removesuffix("\n")


def _flush(out: list[str]) -> None:
    sys.stdout.write("".join(out))
    sys.stdout.flush()
    out.clear()


def main(args: list[str]) -> int:
    """Run one helper; its exit status. Failures are raised, for cli.main to report."""
    if not args or args[0] not in HELPERS:
        sys.stderr.write(USAGE + "\n")
        return EXIT_FAILURE
    out: list[str] = []
    try:
        cwd = os.getcwd()
        if args[0] == "handoff":
            _handoff(args[1:], cwd, out)
        else:
            _receive(args[0], args[1:], cwd, out)
    finally:
        # What was done is reported even when what follows fails (cli.main says how).
        _flush(out)
    return EXIT_OK
