"""The helpers' start-up rules hold on their whole import path, and only there.

Agents run `handoff`, `ready` and `done` many times an hour, each in a new
interpreter, so what those commands import is kept to cheap standard modules: no
pathlib, no contextlib, no typing, no third-party package. The modules on that
path are listed once, in pyproject.toml (the files exempt from ruff's SIM105, since
contextlib.suppress would import contextlib there); this test runs the helpers as
bin/_swarmforge.sh starts them and checks what they import against that list.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.support import BIN, REPO, Project

# Standard modules the helpers may import beyond what the bare interpreter loads.
STDLIB = {
    "__future__",
    "_collections",
    "_functools",
    "_json",
    "_operator",
    "_sre",
    "collections",
    "copyreg",
    "enum",
    "errno",
    "fcntl",
    "functools",
    "itertools",
    "json",
    "json.decoder",
    "json.encoder",
    "json.scanner",
    "keyword",
    "operator",
    "pwd",
    "re",
    "re._casefix",
    "re._compiler",
    "re._constants",
    "re._parser",
    "reprlib",
    "select",
    "types",
}
# Named apart for a plain message: each costs milliseconds, or pulls in many modules.
HEAVY = {
    "pathlib",
    "contextlib",
    "typing",
    "argparse",
    "subprocess",
    "dataclasses",
    "pydantic",
    "psutil",
    "pygit2",
    "watchdog",
    "textual",
    "starlette",
    "uvicorn",
    "tomli_w",
    "nats",
}


def launcher() -> str:
    """The `-c` program bin/_swarmforge.sh runs the helpers with."""
    script = (BIN / "_swarmforge.sh").read_text()
    found = re.search(r"-I -c '([^']+)'", script)
    assert found, "bin/_swarmforge.sh no longer runs `python -I -c '...'`"
    return found.group(1)


def imported(program: str, args: list[str], cwd: Path, role: str) -> tuple[set[str], str]:
    """The modules `python -I -c program args` imports, and its stdout; it must succeed."""
    # A minimal environment, as an agent's: no COVERAGE_* either, whose hook imports more.
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "SWARMFORGE_ROLE": role}
    argv = [sys.executable, "-I", "-X", "importtime", "-c", program, *args]
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    lines = r.stderr.splitlines()
    said = [line for line in lines if not line.startswith("import time:")]
    assert r.returncode == 0, (args, r.stdout, said)
    return {line.rsplit("|", 1)[1].strip() for line in lines if line not in said}, r.stdout


def start_up_path() -> set[str]:
    """The swarmforge modules pyproject.toml lists as the helpers' (exempt from SIM105)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    ignores = config["tool"]["ruff"]["lint"]["per-file-ignores"]
    files = [name for name, rules in ignores.items() if "SIM105" in rules]
    return {re.sub(r"(/__init__)?\.py$", "", name).replace("/", ".") for name in files}


def test_the_helpers_import_only_their_listed_modules_and_cheap_standard_ones(
    project: Project,
) -> None:
    program = launcher()
    bare, _ = imported("pass", [], REPO, "coder")
    coder, qa, cleaner = (project.tree(r) for r in ("coder", "qa", "cleaner"))
    commit = project.commit("coder")
    project.draft(
        "coder", f"type: git_handoff\nto: qa\npriority: 50\ncommit: {commit}\ntask: t1\n", "d1"
    )
    project.draft("coder", "type: note\nto: qa,cleaner\npriority: 40\nmessage: look\n", "d2")
    seen: set[str] = set()
    for args, cwd, role in (
        (["handoff", "d1"], coder, "coder"),
        (["handoff", "d2"], coder, "coder"),
    ):
        modules, said = imported(program, args, cwd, role)
        project.deliver(said.removeprefix("HANDOFF QUEUED: ").strip())
        seen |= modules
    for args, cwd, role in (
        (["ready"], qa, "qa"),  # a batch of two, as text
        (["done", "--json"], qa, "qa"),
        (["ready", "--json"], cleaner, "cleaner"),  # a task
        (["done"], cleaner, "cleaner"),
    ):
        modules, said = imported(program, args, cwd, role)
        assert said.startswith(("BATCH:", "{", "COMPLETED:")), said
        seen |= modules
    added = seen - bare
    ours = {m for m in added if m == "swarmforge" or m.startswith("swarmforge.")}
    assert {"swarmforge.handoff.gate", "swarmforge.handoff.ready"} <= ours  # the path ran
    heavy = {m for m in added if m.partition(".")[0] in HEAVY}
    assert not heavy, f"the helpers' start-up path imports {sorted(heavy)}"
    assert added - ours <= STDLIB, f"new on the helpers' path: {sorted(added - ours - STDLIB)}"
    listed = start_up_path()
    assert ours <= listed, (
        f"{sorted(ours - listed)} joined the helpers' path: keep them to its rules (no "
        "pathlib, no contextlib.suppress) and add them to SIM105's per-file-ignores"
    )
    assert listed <= ours, f"{sorted(listed - ours)} left the helpers' path: unlist them"


def test_building_the_command_line_imports_no_command_s_work() -> None:
    # `--help` and a mistyped command build the whole parser, and a command its own
    # module's; a command module that imports its work at the top makes them pay for it
    # (a quarter of a second once, when one imported the headless runner).
    program = (
        "import sys\n"
        "from swarmforge.cli import parser\n"
        "parser.build(); parser.build_internal()\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    r = subprocess.run(
        [sys.executable, "-I", "-c", program], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    modules = set(r.stdout.split())
    packages = {"pydantic", "psutil", "pygit2", "watchdog", "textual", "starlette", "nats"}
    heavy = {m for m in modules if m.partition(".")[0] in packages}
    assert not heavy, f"building the parser imports {sorted(heavy)}"
    ours = {m.partition(".")[2] for m in modules if m.startswith("swarmforge.")}
    beyond = sorted(m for m in ours if m.count(".") and not m.startswith("cli."))
    assert not beyond, f"building the parser imports {beyond}"
