"""What the two live views cost while the swarm idles: `swarmforge watch` and the cockpit.

A six-role swarm runs on the tmux backend in a temporary project; each role's agent is
`sh -c 'exec sleep ...'`, which never takes work, while the pane supervisors go on
judging their agents every few seconds as they do for real ones. Then, for each version
of the views measured:

- `swarmforge cockpit --json` with one page open: a client reading its `/stream`, as the
  page's EventSource does (the first state read before the window opens);
- `swarmforge watch` in a 200x50 window of a private tmux server (`tmux -L`), its rows
  drawn before the window opens;

and each process's CPU, with the children it waited for (git, tmux), over --seconds
of the same window, as % of one core; beside it, the events logged and the states
sent to the page in the window (one for each read that found anything changed, ages
included).
Baseline: an idle python process over the same window. With --before REF, the views of
commit REF (its package extracted with `git archive` into a temporary directory, run
with `python -m swarmforge` on PYTHONPATH) are measured the same way against the same
swarm, after this checkout's. With --wait 60, the views run a minute longer before the
window opens: the agents' states are then older than a minute, as in a swarm that
waits for work, and watch's `for` column counts minutes rather than seconds.

Target: at most 1% of a core each.

  .venv/bin/python bench/views_idle.py [--seconds 25] [--wait 0] [--before REF] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import psutil
from views import (  # bench/ is the script's directory, first on sys.path
    SIZE,
    cpu_seconds,
    end_tmux,
    env,
    lines_in,
    make_project,
    quiet,
    rows_drawn,
    sf,
    tmux,
    view_process,
    wait,
)

from swarmforge.events import log_path
from swarmforge.tmux.server import project_socket

REPO = Path(__file__).resolve().parents[1]
SETTLE = 3.0  # seconds each view runs after its first rows before the window opens


def note(message: str) -> None:
    print(f"[views-idle] {message}", file=sys.stderr, flush=True)


def extract(ref: str, into: Path) -> str:
    """The package of commit `ref` of this repository, extracted under `into`."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", ref, "swarmforge"],
        check=True,
        capture_output=True,
    ).stdout
    into.mkdir()
    tar = into / "package.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as unpacked:
        unpacked.extractall(into, filter="data")
    return str(into)


def command(package: str | None) -> tuple[list[str], dict[str, str]]:
    """How to start `swarmforge`: this checkout's, or the one extracted at `package`."""
    found = env()
    if package is None:
        return [sys.executable, "-m", "swarmforge"], found
    found["PYTHONPATH"] = package
    return [sys.executable, "-m", "swarmforge"], found


@contextmanager
def cockpit(
    root: str, package: str | None, logs: Path
) -> Iterator[tuple[psutil.Process, list[int]]]:
    """The cockpit serving `root` with one client reading its stream; stopped with Ctrl-C.
    Yields the server and [the number of states the client has read]."""
    argv, environ = command(package)
    with (logs / "cockpit.err").open("ab") as err:
        server = subprocess.Popen(
            [*argv, "cockpit", "--json", "--project", root],
            cwd=logs,  # not this checkout: `python -m` would import its package first
            env=environ,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        if not first:
            raise SystemExit(f"the cockpit did not start: see {logs / 'cockpit.err'}")
        states = read_stream(str(json.loads(first)["url"]) + "stream")
        wait(lambda: states[0] > 0, "the cockpit's first state")
        yield psutil.Process(server.pid), states
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def read_stream(url: str) -> list[int]:
    """A thread reading the stream at `url` to its end; [number of states read so far]."""
    states = [0]

    def read() -> None:
        with suppress(OSError), urllib.request.urlopen(url, timeout=3600) as stream:
            for raw in stream:
                if raw.startswith(b"event: state"):
                    states[0] += 1

    threading.Thread(target=read, daemon=True).start()
    return states


@contextmanager
def watch(root: str, package: str | None, logs: Path, tag: str) -> Iterator[psutil.Process]:
    """`swarmforge watch` in a window of a private tmux server, its rows drawn."""
    socket = f"sf-bench-idle-{os.getpid()}-{tag}"
    argv, environ = command(package)
    line = "exec " + shlex.join([*argv, "watch", "--project", root])
    if package is not None:
        line = f"PYTHONPATH={shlex.quote(package)} {line}"
    width, height = SIZE
    try:
        subprocess.run(
            [
                *("tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "watch"),
                *("-c", str(logs), "-x", str(width), "-y", str(height), line),
            ],
            env=environ,
            check=True,
            capture_output=True,
            timeout=30,
        )
        pane = int(tmux(socket, "list-panes", "-t", "watch", "-F", "#{pane_pid}").split()[0])
        wait(lambda: rows_drawn(socket), "watch to draw its rows")
        yield view_process(pane)
    finally:
        end_tmux(socket)


@contextmanager
def idle_python() -> Iterator[psutil.Process]:
    """A python process that only sleeps: what any process costs at rest."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        yield psutil.Process(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()


def measure(procs: dict[str, psutil.Process], seconds: float) -> dict[str, float]:
    """% of one core each process (with its children) used over the same `seconds`."""
    used = {name: -cpu_seconds([p]) for name, p in procs.items()}
    start = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - start
    for name, proc in procs.items():
        used[name] += cpu_seconds([proc])
    return {name: round(100 * value / wall, 2) for name, value in used.items()}


def one_version(
    root: str, package: str | None, logs: Path, args: argparse.Namespace, tag: str
) -> dict[str, float]:
    """Both views of one version, idle side by side, measured over one window; beside
    them, what happened in the window: events logged, states the page was sent."""
    with ExitStack() as stack:
        server, states = stack.enter_context(cockpit(root, package, logs))
        viewer = stack.enter_context(watch(root, package, logs, tag))
        rest = stack.enter_context(idle_python())
        time.sleep(SETTLE + args.wait)
        note(f"{tag}: measuring {args.seconds:.0f} s")
        pushed, logged = states[0], lines_in(log_path(root))
        procs = {"cockpit": server, "watch": viewer, "idle python": rest}
        used = measure(procs, args.seconds)
        return {**used, "events": lines_in(log_path(root)) - logged, "states": states[0] - pushed}


def run(args: argparse.Namespace, base: Path) -> dict[str, Any]:
    root = make_project(base)
    logs = base / "logs"
    logs.mkdir()
    versions: dict[str, str | None] = {"this checkout": None}
    if args.before:
        versions[f"before ({args.before})"] = extract(args.before, base / "before")
    report: dict[str, Any] = {"seconds": args.seconds, "wait": args.wait, "versions": {}}
    try:
        note("starting a six-role swarm on tmux")
        sf(root, "up", "--backend", "tmux", "--stagger", "0")
        quiet(root, still=2.0)
        for n, (name, package) in enumerate(versions.items()):
            report["versions"][name] = one_version(root, package, logs, args, f"v{n}")
    finally:
        note("stopping the swarm")
        try:
            sf(root, "down", "--purge", timeout=120)
        except (subprocess.SubprocessError, OSError) as exc:
            note(f"swarmforge down --purge failed: {exc}")
        finally:
            end_tmux(project_socket(root))
    return report


def show(report: dict[str, Any]) -> None:
    print(
        f"CPU while a six-role swarm idles, % of one core over {report['seconds']:.0f} s"
        f" (views started {report['wait'] + SETTLE:.0f} s before)"
    )
    print(f"  {'':22s} {'cockpit':>8s} {'watch':>8s} {'idle python':>12s}   in the window")
    for name, used in report["versions"].items():
        print(
            f"  {name:22s} {used['cockpit']:8.2f} {used['watch']:8.2f} {used['idle python']:12.2f}"
            f"   {used['events']} events, {used['states']} states sent to the page"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=25.0, help="idle window (25)")
    parser.add_argument("--wait", type=float, default=0.0, help="idle seconds before (0)")
    parser.add_argument("--before", help="a commit whose views are measured too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    base = Path(tempfile.mkdtemp(prefix="swarmforge-bench-idle-"))
    try:
        report = run(args, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        show(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
