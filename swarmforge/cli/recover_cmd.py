"""`swarmforge recover`: list each role's captures, or restore one into a new worktree
(the captures themselves are swarmforge/git/captures.py's)."""

from __future__ import annotations

import argparse

from swarmforge.cli.common import emit
from swarmforge.errors import EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from swarmforge.git.captures import Capture


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `recover`."""
    from swarmforge.cli.common import project_option

    recover = sub.add_parser(
        "recover",
        help="list the captures of each role's work, or restore one into a new worktree",
        description="Without CAPTURE: list the captures of every role (or of ROLE): when "
        "each was taken, what took it, and the files in which it differs from the role's "
        "branch. With CAPTURE (its stamp, or the start of it): check it out into a new "
        "branch recovered/ROLE/STAMP and a new worktree beside the role's, with HEAD, "
        "index and files as they were; nothing that exists is touched.",
    )
    recover.add_argument("role", nargs="?", help="the role whose captures to list or restore")
    recover.add_argument("capture", nargs="?", help="the capture to restore")
    recover.add_argument("--json", action="store_true", help="print the result as JSON")
    project_option(recover)
    recover.set_defaults(handler=_recover)


def _recover(ns: argparse.Namespace) -> int:
    from swarmforge.cli.common import project_root
    from swarmforge.git import captures
    from swarmforge.projectroot import CHECKOUT, CONFIG

    # From a role's worktree too: captures, and the worktrees they go to, are the main
    # checkout's.
    root = captures.main_top(project_root(ns.project, (CONFIG, CHECKOUT)))
    if ns.capture is not None:
        capture = captures.find(root, ns.role, ns.capture)
        branch, path = captures.restore(root, capture)
        data = {"role": capture.role, "capture": capture.name, "branch": branch, "path": path}
        emit(
            ns.json,
            data,
            [
                f"restored capture {capture.name} of {capture.role} ({capture.trigger})",
                f"  branch:   {branch}",
                f"  worktree: {path}",
            ],
        )
        return EXIT_OK
    listed = captures.listed(root, ns.role)
    rows = [(c, _changed(root, c)) for c in listed]
    emit(ns.json, {"captures": [_json(c, files) for c, files in rows]}, _lines(rows, ns.role))
    return EXIT_OK


def _changed(root: str, capture: Capture) -> list[str]:
    """The files in which the capture differs from its role's branch as it is now (from
    the commit it was taken on, when that branch is gone)."""
    from swarmforge.git import captures
    from swarmforge.git.objects import lookup

    tip = lookup(root, capture.branch).commit if capture.branch else None
    against = tip or capture.head
    if against is None:
        return []
    return captures.changed_files(root, capture, against)


def _json(capture: Capture, files: list[str]) -> dict[str, object]:
    from swarmforge import times

    return {
        "role": capture.role,
        "capture": capture.name,
        "taken_at": times.stamp(capture.seconds),
        "trigger": capture.trigger,
        "ref": capture.ref,
        "commit": capture.commit,
        "head": capture.head,
        "branch": capture.branch,
        "files": files,
    }


def _lines(rows: list[tuple[Capture, list[str]]], role: str | None) -> list[str]:
    from swarmforge import times
    from swarmforge.text import shown as safe

    if not rows:
        return [f"no captures of {role}" if role else "no captures"]
    out: list[str] = []
    current = None
    for capture, files in rows:
        if capture.role != current:
            current = capture.role
            out.append(f"{safe(current)}:")
        some = ", ".join(safe(f) for f in files[:3]) + (", ..." if len(files) > 3 else "")
        changed = f"{len(files)} file(s) off its branch" + (f": {some}" if files else "")
        out.append(
            f"  {capture.name}  {times.stamp(capture.seconds)}  {safe(capture.trigger)}  {changed}"
        )
    return out
