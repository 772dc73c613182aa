"""The two live views, `swarmforge cockpit` (a browser) and `swarmforge watch` (a terminal).

A six-role swarm runs on the tmux backend in a temporary project. Each role's agent is
`sh -c 'exec sleep ...'` (plain `sleep` refuses the prompt `up` appends as its last
argument), which never takes work: every handoff queued for a role stays in its
inbox/new/ and raises the role's queue count. Measured, each next to a baseline from
the same run:

latency  from just before a handoff is queued through the gate (fromuser.send) to the
         target role's queue cell changing, p50 and p90 over --handoffs handoffs at
         least --spacing apart: the cockpit in chromium through Playwright (a
         MutationObserver stamps Date.now() when the cell's text changes), and watch
         under Textual's run_test() in this process (a WatchApp whose _show stamps
         time.time() once the row's queue cell changed, before Textual paints it).
         Baseline: the delivery itself, to the copy appearing in the recipient's
         inbox/new/ (polled); also the median of what each view adds to it, handoff
         by handoff, and what one read of the swarm (snapshot.snapshot) costs.
cpu      while the swarm idles, over --idle seconds each, as % of one core: the
         cockpit server with one page open, and watch in a 200x50 window of a
         private tmux server (each process with its children: git, tmux). Baseline:
         the delivery daemon over the same window (its threads' run time, to the
         nanosecond). The browser's and the tmux server's own CPU are shown beside.
memory   current and peak RSS of the cockpit server (page open, rows shown) and of
         watch (in tmux, drawn) with --events events appended to the event log,
         next to the same on a log of 100 events (the run's log is moved aside);
         and the median time from each view's start to its rows, over --starts.

No targets: what the views add to a delivery, and what they cost while nothing happens.

  .venv/bin/python bench/views.py [--latency] [--cpu] [--memory] (default: all)
      [--handoffs 100] [--spacing 0.3] [--idle 30] [--events 100000] [--starts 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import psutil
from _common import GIT_ENV, git  # bench/ is the script's directory, first on sys.path
from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from swarmforge.daemon.paths import Paths
from swarmforge.daemon.running import running_pid
from swarmforge.events import EventLog, log_path
from swarmforge.handoff import fromuser
from swarmforge.handoff.mailbox import Box, Mailbox
from swarmforge.tmux.server import project_socket
from swarmforge.views.snapshot import Snapshot, snapshot
from swarmforge.views.watch.app import WatchApp
from swarmforge.views.watch.table import COLUMNS

ROLES = ("specifier", "coder", "cleaner", "architect", "hardener", "qa")
COCKPIT_ROLE, WATCH_ROLE = "qa", "coder"  # each view's latency has a queue of its own
VENV_BIN = str(Path(sys.executable).parent)
SWARMFORGE = str(Path(VENV_BIN, "swarmforge"))
CHROMIUM = "/usr/bin/chromium"
SIZE = (200, 50)  # the terminal watch runs in, columns x lines
QUEUE = COLUMNS.index("queue")
TIMEOUT = 30.0  # seconds anything the bench waits for may take before it gives up
SETTLE = 3.0  # seconds a view runs after its first rows before it is measured
SMALL_LOG = 100  # events in the "nearly empty" log of the memory measurement

OBSERVE = """(role) => {
  const body = document.querySelector("#roles tbody");
  const read = () => {
    const td = body.querySelector(`tr[data-role="${role}"] td[data-col="queued"]`);
    return td ? td.textContent : null;
  };
  window.benchSeen = {};
  let last = read();
  new MutationObserver(() => {
    const now = read();
    if (now !== last) {
      last = now;
      if (!(now in window.benchSeen)) window.benchSeen[now] = Date.now();
    }
  }).observe(body, {childList: true, subtree: true, characterData: true});
  return last;
}"""


def note(message: str) -> None:
    print(f"[views] {message}", file=sys.stderr, flush=True)


def env() -> dict[str, str]:
    """Ours, with the venv's commands first, a git identity, and a terminal type for tmux."""
    found = dict(os.environ)
    found.update({k: v for k, v in GIT_ENV.items() if k.startswith("GIT_")})
    found["PATH"] = f"{VENV_BIN}:{found.get('PATH', '/usr/bin:/bin')}"
    found.setdefault("TERM", "xterm-256color")
    return found


def sf(root: str, *args: str, timeout: float = 120) -> None:
    subprocess.run(
        [SWARMFORGE, *args, "--project", root],
        env=env(),
        check=True,
        capture_output=True,
        timeout=timeout,
    )


def make_project(base: Path) -> str:
    """A committed six-role swarm configuration whose agents never take work."""
    root = base / "project"
    (root / "swarmforge" / "roles").mkdir(parents=True)
    conf = "".join(f"window {r} sh {r} task -c 'exec sleep 1000000'\n" for r in ROLES)
    (root / "swarmforge" / "swarmforge.conf").write_text(conf)
    (root / "swarmforge" / "constitution.prompt").write_text("Work carefully.\n")
    for role in ROLES:
        (root / "swarmforge" / "roles" / f"{role}.prompt").write_text(f"You are the {role}.\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "swarm")
    return os.path.realpath(root)


def inbox(root: str, role: str) -> str:
    return str(Mailbox(str(Path(root, ".worktrees", role))).path(Box.NEW))


def queued(root: str, role: str) -> int:
    return sum(1 for item in Path(inbox(root, role)).iterdir() if item.name.endswith(".handoff"))


def deliver(root: str, role: str, seq: int) -> tuple[float, float, float]:
    """Queue one handoff for `role` through the gate: (t0, when the gate returned, when the
    copy was in the role's inbox/new/)."""
    box = inbox(root, role)
    t0 = time.time()
    path, _ = fromuser.send(root, role, f"Benchmark handoff {seq}.")
    queued_at = time.time()
    copy = Path(box, Path(path).name)
    deadline = time.monotonic() + TIMEOUT
    while not copy.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"not delivered within {TIMEOUT:.0f} s: {copy}")
        time.sleep(0.0002)
    return t0, queued_at, time.time()


def quiet(root: str, still: float = 3.0, limit: float = 20.0) -> None:
    """Wait until the event log has not moved for `still` seconds (at most `limit`)."""
    log, last, since = Path(log_path(root)), None, time.monotonic()
    deadline = since + limit
    while time.monotonic() < deadline:
        try:
            st = log.stat()
            stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        if stamp != last:
            last, since = stamp, time.monotonic()
        elif time.monotonic() - since >= still:
            return
        time.sleep(0.1)


def wait(check: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


# -- the views, started as a person would ------------------------------------------------


@contextmanager
def cockpit(root: str, logs: Path) -> Iterator[tuple[psutil.Process, str]]:
    """`swarmforge cockpit --json` serving `root`: its process and URL; stopped with Ctrl-C."""
    with (logs / "cockpit.err").open("ab") as err:
        server = subprocess.Popen(
            [SWARMFORGE, "cockpit", "--json", "--project", root],
            env=env(),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        if not first:
            raise SystemExit(f"the cockpit did not start: see {logs / 'cockpit.err'}")
        yield psutil.Process(server.pid), str(json.loads(first)["url"])
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=CHROMIUM)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Browser, url: str, role: str) -> Page:
    page = browser.new_page()
    page.goto(url)
    page.wait_for_selector(f"tr[data-role={role}] td[data-col=queued]", timeout=TIMEOUT * 1000)
    return page


def tmux(socket: str, *args: str) -> str:
    result = subprocess.run(
        ["tmux", "-L", socket, *args], env=env(), capture_output=True, text=True, timeout=30
    )
    return result.stdout


def end_tmux(socket: str) -> None:
    """Stop the tmux server on `socket`, and remove the socket file it leaves behind."""
    tmux(socket, "kill-server")
    tmpdir = os.environ.get("TMUX_TMPDIR") or "/tmp"
    with suppress(OSError):
        Path(tmpdir, f"tmux-{os.getuid()}", socket).unlink()


@contextmanager
def watch_in_tmux(root: str, tag: str) -> Iterator[tuple[psutil.Process, psutil.Process, str]]:
    """`swarmforge watch` in a window of a private tmux server: (watch, tmux server, socket)."""
    socket = f"sf-bench-views-{os.getpid()}-{tag}"
    command = f"exec {shlex.quote(SWARMFORGE)} watch --project {shlex.quote(root)}"
    width, height = SIZE
    try:
        subprocess.run(
            [
                *("tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "watch"),
                *("-x", str(width), "-y", str(height), command),
            ],
            env=env(),
            check=True,
            capture_output=True,
            timeout=30,
        )
        pane = int(tmux(socket, "list-panes", "-t", "watch", "-F", "#{pane_pid}").split()[0])
        server = int(tmux(socket, "display-message", "-p", "-t", "watch", "#{pid}").strip())
        yield view_process(pane), psutil.Process(server), socket
    finally:
        end_tmux(socket)


def view_process(pid: int) -> psutil.Process:
    """The `swarmforge watch` process: the pane's own (it was exec'd) or one of its children."""
    proc = psutil.Process(pid)
    for candidate in (proc, *proc.children(recursive=True)):
        with suppress(psutil.Error):
            if "watch" in candidate.cmdline():
                return candidate
    return proc


def rows_drawn(socket: str) -> bool:
    """True once every role's row is in the tmux window watch runs in."""
    screen = tmux(socket, "capture-pane", "-p", "-t", "watch")
    return all(re.search(rf"^\W*{role}\s", screen, re.MULTILINE) for role in ROLES)


# -- latency --------------------------------------------------------------------------------


def percentiles(samples: list[float]) -> dict[str, float | None]:
    ms = sorted(s * 1000 for s in samples)
    if not ms:
        return {"p50_ms": None, "p90_ms": None, "max_ms": None}
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p90_ms": round(ms[int(0.90 * (len(ms) - 1))], 1),
        "max_ms": round(ms[-1], 1),
    }


def latency_report(
    view: list[float], delivery: list[float], gated: list[float], missed: int
) -> dict[str, Any]:
    shown = [v for v in view if v == v]  # NaN: never shown within TIMEOUT
    paired = [v - d for v, d in zip(view, delivery, strict=True) if v == v]
    report: dict[str, Any] = {
        "count": len(delivery),
        "missed": missed,
        "view": percentiles(shown),
        "delivery": percentiles(delivery),
        "gate_p50_ms": round(statistics.median(gated) * 1000, 1),  # of delivery: the gate's part
        "added_p50_ms": round(statistics.median(paired) * 1000, 1) if paired else None,
    }
    shown_p50, delivery_p50 = report["view"]["p50_ms"], report["delivery"]["p50_ms"]
    report["ratio_p50"] = None if shown_p50 is None else ratio(shown_p50, delivery_p50)
    return report


def cockpit_latency(
    root: str, logs: Path, count: int, spacing: float, first_seq: int
) -> dict[str, Any]:
    role = COCKPIT_ROLE
    view: list[float] = []
    delivery: list[float] = []
    gated: list[float] = []
    missed = 0
    with cockpit(root, logs) as (_, url), chromium() as browser:
        page = open_page(browser, url, role)
        page.wait_for_function(
            """([role, n]) => document.querySelector(
                 `tr[data-role="${role}"] td[data-col="queued"]`)?.textContent === n""",
            arg=[role, str(queued(root, role))],
            timeout=TIMEOUT * 1000,
        )
        base = int(page.evaluate(OBSERVE, role))
        for i in range(count):
            if i and i % 25 == 0:
                note(f"cockpit latency: {i}/{count} handoffs")
            t0, sent, arrived = deliver(root, role, first_seq + i)
            delivery.append(arrived - t0)
            gated.append(sent - t0)
            want = str(base + i + 1)
            try:
                page.wait_for_function(
                    "n => window.benchSeen[n] !== undefined",
                    arg=want,
                    polling=10,
                    timeout=TIMEOUT * 1000,
                )
                view.append(float(page.evaluate("n => window.benchSeen[n]", want)) / 1000 - t0)
            except PlaywrightTimeout:
                missed += 1
                view.append(float("nan"))
            time.sleep(max(0.0, t0 + spacing - time.time()))
        page.close()
    return latency_report(view, delivery, gated, missed)


class TimedWatch(WatchApp):
    """WatchApp noting when `role`'s queue cell took each value it showed."""

    def __init__(self, root: str, role: str) -> None:
        super().__init__(root)
        self.role = role
        self.last: str | None = None
        self.seen: dict[str, float] = {}

    def _show(self, snap: Snapshot | str, lines: list[str]) -> None:
        super()._show(snap, lines)
        table: DataTable[str] = self.query_one(DataTable)
        try:
            value = str(table.get_row(self.role)[QUEUE])
        except RowDoesNotExist:
            return
        if value != self.last:
            self.last = value
            self.seen.setdefault(value, time.time())


async def watch_latency(root: str, count: int, spacing: float, first_seq: int) -> dict[str, Any]:
    role = WATCH_ROLE
    view: list[float] = []
    delivery: list[float] = []
    gated: list[float] = []
    missed = 0

    async def until(check: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.005)
        return True

    app = TimedWatch(root, role)
    async with app.run_test(size=SIZE):
        if not await until(lambda: app.last == str(queued(root, role))):
            raise SystemExit(f"watch did not show {role}'s queue within {TIMEOUT:.0f} s")
        base = int(app.last or 0)
        for i in range(count):
            if i and i % 25 == 0:
                note(f"watch latency: {i}/{count} handoffs")
            # In a thread: the app keeps running while the gate writes and the poll waits.
            t0, sent, arrived = await asyncio.to_thread(deliver, root, role, first_seq + i)
            delivery.append(arrived - t0)
            gated.append(sent - t0)
            want = str(base + i + 1)
            if await until(lambda: want in app.seen):  # noqa: B023 (awaited here)
                view.append(app.seen[want] - t0)
            else:
                missed += 1
                view.append(float("nan"))
            await asyncio.sleep(max(0.0, t0 + spacing - time.time()))
    return latency_report(view, delivery, gated, missed)


# -- CPU ------------------------------------------------------------------------------------


def cpu_seconds(procs: list[psutil.Process], tree: bool = True) -> float:
    """CPU time of `procs` and the children they have waited for, and with `tree` their
    live descendants'."""
    seen: set[int] = set()
    total = 0.0
    for proc in procs:
        with suppress(psutil.Error):
            for p in (proc, *(proc.children(recursive=True) if tree else ())):
                if p.pid in seen:
                    continue
                seen.add(p.pid)
                with suppress(psutil.Error):
                    t = p.cpu_times()
                    total += t.user + t.system + t.children_user + t.children_system
    return total


def precise_seconds(proc: psutil.Process) -> float:
    """CPU time of a long-lived process, to the nanosecond: its live threads' schedstat
    (the kernel's run time), plus the children it has waited for. The clock ticks psutil
    counts in (10 ms) are too coarse for an idle daemon over half a minute; a view's
    worker threads come and go, so the views are counted in ticks instead."""
    try:
        total = 0
        for task in Path(f"/proc/{proc.pid}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[0])
        times = proc.cpu_times()
        return total / 1e9 + float(times.children_user + times.children_system)
    except (OSError, ValueError, psutil.Error):
        return cpu_seconds([proc])


def idle_window(meters: dict[str, Callable[[], float]], seconds: float) -> dict[str, float]:
    """% of one core each meter (CPU seconds so far) moved over the same `seconds`."""
    used = {name: -meter() for name, meter in meters.items()}
    start = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - start
    for name, meter in meters.items():
        used[name] += meter()
    return {name: round(100 * value / wall, 3) for name, value in used.items()}


def chromium_processes() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        with suppress(psutil.Error):
            if "chrom" in child.name():
                found.append(child)
    return found


def cpu(root: str, logs: Path, seconds: float) -> dict[str, Any]:
    daemon = psutil.Process(daemon_pid(root))
    report: dict[str, Any] = {"seconds": seconds}
    note("cpu: letting the swarm go quiet")
    quiet(root)
    with cockpit(root, logs) as (server, url), chromium() as browser:
        page = open_page(browser, url, COCKPIT_ROLE)
        time.sleep(SETTLE)
        note(f"cpu: cockpit with one page open, {seconds:.0f} s")
        browser_procs = chromium_processes()
        used = idle_window(
            {
                "view": lambda: cpu_seconds([server]),
                "daemon": lambda: precise_seconds(daemon),
                "browser": lambda: cpu_seconds(browser_procs),
            },
            seconds,
        )
        page.close()
    report["cockpit"] = {**used, "ratio": ratio(used["view"], used["daemon"])}
    quiet(root, still=1.0)
    with watch_in_tmux(root, "cpu") as (watch, tmux_server, socket):
        wait(lambda: rows_drawn(socket), "watch to draw its rows")
        time.sleep(SETTLE)
        note(f"cpu: watch in tmux, {seconds:.0f} s")
        before, start = watch.io_counters().write_chars, time.monotonic()
        used = idle_window(
            {
                "view": lambda: cpu_seconds([watch]),
                "daemon": lambda: precise_seconds(daemon),
                # The server alone: watch is its child.
                "tmux": lambda: cpu_seconds([tmux_server], tree=False),
            },
            seconds,
        )
        written = (watch.io_counters().write_chars - before) / (time.monotonic() - start)
    report["watch"] = {**used, "ratio": ratio(used["view"], used["daemon"])}
    report["watch"]["written_kb_s"] = round(written / 1024, 1)  # to its terminal, mostly
    return report


def daemon_pid(root: str) -> int:
    pid = running_pid(Paths(root))
    if not pid:
        raise SystemExit("the delivery daemon is not running")
    return pid


def ratio(a: float, b: float, digits: int = 1) -> float | None:
    return round(a / b, digits) if b > 0 else None


# -- memory ---------------------------------------------------------------------------------


def rss_mb(proc: psutil.Process) -> dict[str, float]:
    """Current and peak resident memory, MB (peak from /proc where there is one)."""
    current = proc.memory_info().rss
    peak = current
    with suppress(OSError), Path(f"/proc/{proc.pid}/status").open() as status:
        for line in status:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    return {"rss_mb": round(current / 2**20, 1), "peak_mb": round(peak / 2**20, 1)}


def handoff_events(count: int, first: int) -> Iterator[tuple[str, dict[str, str]]]:
    """`count` events of handoffs going round the roles: queued, delivered, taken, completed."""
    n = first
    while True:
        role, sender = ROLES[n % len(ROLES)], ROLES[(n + 1) % len(ROLES)]
        name = f"50_20260101T000000Z_{n:06d}_from_{sender}_to_{role}.handoff"
        common = {"name": name, "from": sender, "priority": "50"}
        for kind, fields in (
            ("handoff-queued", {**common, "to": role, "type": "note"}),
            ("handoff-delivered", {**common, "to": role}),
            ("handoff-dequeued", {**common, "role": role}),
            ("handoff-completed", {**common, "role": role}),
        ):
            if count == 0:
                return
            count -= 1
            yield kind, fields
        n += 1


def fill_log(root: str, count: int, first: int = 0) -> None:
    log, left, seq = EventLog(root), count, first
    while left > 0:
        batch = min(left, 10_000)
        if not log.emit_many(handoff_events(batch, seq)):
            raise SystemExit(f"cannot append to {log.path}")
        left -= batch
        seq += batch // 4 + 1


def lines_in(path: str) -> int:
    with Path(path).open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def memory_once(root: str, logs: Path, tag: str, starts: int) -> dict[str, Any]:
    """Each view started `starts` times: the median time to its first rows, and its memory
    once the last start has run SETTLE seconds past them."""
    found: dict[str, Any] = {"events": lines_in(log_path(root))}
    firsts: list[float] = []
    pages: list[float] = []
    with chromium() as browser:
        for n in range(starts):
            start = time.perf_counter()
            with cockpit(root, logs) as (server, url):
                served = time.perf_counter()
                page = open_page(browser, url, ROLES[-1])
                shown = time.perf_counter()
                firsts.append(shown - start)
                pages.append(shown - served)
                if n == starts - 1:
                    time.sleep(SETTLE)
                    found["cockpit"] = rss_mb(server)
                page.close()
    found["cockpit"]["first_rows_s"] = round(statistics.median(firsts), 3)
    found["cockpit"]["page_to_rows_s"] = round(statistics.median(pages), 3)
    firsts = []
    for n in range(starts):
        start = time.perf_counter()
        with watch_in_tmux(root, f"{tag}{n}") as (watch, _, socket):
            wait(lambda: rows_drawn(socket), "watch to draw its rows")
            firsts.append(time.perf_counter() - start)
            if n == starts - 1:
                time.sleep(SETTLE)
                found["watch"] = rss_mb(watch)
    found["watch"]["first_rows_s"] = round(statistics.median(firsts), 3)
    return found


def memory(root: str, logs: Path, events: int, starts: int) -> dict[str, Any]:
    log = Path(log_path(root))
    if log.exists():  # kept beside: the small log is SMALL_LOG events, not the run's
        log.rename(f"{log}.before-memory")
    fill_log(root, SMALL_LOG, first=900_000)
    note(f"memory: views on a log of {SMALL_LOG} events")
    small = memory_once(root, logs, "small", starts)
    note(f"memory: appending {events:,} events")
    start = time.perf_counter()
    fill_log(root, events)
    appended = time.perf_counter() - start
    note(f"memory: views on a log of {events + SMALL_LOG:,} events")
    big = memory_once(root, logs, "big", starts)
    report: dict[str, Any] = {"small": small, "big": big, "append_s": round(appended, 2)}
    for view in ("cockpit", "watch"):
        report[f"{view}_ratio"] = {
            key: ratio(big[view][key], small[view][key], 2)
            for key in ("rss_mb", "peak_mb", "first_rows_s")
        }
    return report


# -- the run --------------------------------------------------------------------------------


def read_cost(root: str, count: int = 10) -> float:
    """Median ms of one read of the swarm (snapshot.snapshot), as either view makes it."""
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        snapshot(root)
        samples.append(time.perf_counter() - start)
    return round(statistics.median(samples) * 1000, 1)


def run(args: argparse.Namespace, base: Path) -> dict[str, Any]:
    root = make_project(base)
    logs = base / "logs"
    logs.mkdir()
    report: dict[str, Any] = {"roles": len(ROLES)}
    try:
        note("starting a six-role swarm on tmux")
        sf(root, "up", "--backend", "tmux", "--stagger", "0")
        quiet(root, still=2.0)
        if args.latency:
            lat: dict[str, Any] = {"spacing_s": args.spacing, "snapshot_ms": read_cost(root)}
            report["latency"] = lat
            note(f"latency: cockpit, {args.handoffs} handoffs to {COCKPIT_ROLE}")
            lat["cockpit"] = cockpit_latency(root, logs, args.handoffs, args.spacing, 0)
            note(f"latency: watch, {args.handoffs} handoffs to {WATCH_ROLE}")
            lat["watch"] = asyncio.run(
                watch_latency(root, args.handoffs, args.spacing, args.handoffs)
            )
        if args.cpu:
            report["cpu"] = cpu(root, logs, args.idle)
        if args.memory:
            report["memory"] = memory(root, logs, args.events, args.starts)
    finally:
        note("stopping the swarm")
        try:
            sf(root, "down", "--purge", timeout=120)
        except (subprocess.SubprocessError, OSError) as exc:
            note(f"swarmforge down --purge failed: {exc}")
        finally:
            end_tmux(project_socket(root))
    return report


def num(value: float | None, width: int, digits: int) -> str:
    return f"{'n/a':>{width}s}" if value is None else f"{value:{width}.{digits}f}"


def show(report: dict[str, Any]) -> None:
    if "latency" in report:
        lat = report["latency"]
        print(
            f"latency: handoff queued -> the role's queue cell changed on screen "
            f"({lat['cockpit']['count']} handoffs each, {lat['spacing_s'] * 1000:.0f} ms apart)"
        )
        print(f"  {'':36s} {'p50 ms':>8s} {'p90 ms':>8s} {'max ms':>8s}")
        for name, label in (("cockpit", "cockpit (chromium)"), ("watch", "watch (Textual _show)")):
            r = lat[name]
            for what, row in ((label, r["view"]), ("  baseline: delivery", r["delivery"])):
                cells = " ".join(num(row[k], 8, 1) for k in ("p50_ms", "p90_ms", "max_ms"))
                print(f"  {what:36s} {cells}")
            print(
                f"  {'  ratio of p50s (view / delivery)':36s} {num(r['ratio_p50'], 8, 1)}   "
                f"view adds "
                f"{r['added_p50_ms']} ms (median); gate {r['gate_p50_ms']} ms of the delivery; "
                f"missed {r['missed']}"
            )
        print(f"  one read of the swarm (snapshot.snapshot): {lat['snapshot_ms']} ms (median)")
    if "cpu" in report:
        c = report["cpu"]
        print(f"CPU while the swarm idles, % of one core over {c['seconds']:.0f} s")
        print(f"  {'':36s} {'view':>8s} {'daemon':>8s} {'ratio':>8s}   beside")
        for name, extra in (("cockpit", "browser"), ("watch", "tmux")):
            r = c[name]
            more = f", writes {r['written_kb_s']} KB/s" if "written_kb_s" in r else ""
            print(
                f"  {name + ' (process and children)':36s} {r['view']:8.2f} {r['daemon']:8.3f}"
                f" {num(r['ratio'], 8, 0)}   {extra} {r[extra]:.2f}{more}"
            )
    if "memory" in report:
        m = report["memory"]
        small, big = m["small"], m["big"]
        print(
            f"memory and first rows, log of {small['events']:,} vs {big['events']:,} events "
            f"(appended in {m['append_s']} s)"
        )
        print(f"  {'':36s} {'small':>8s} {'big':>8s} {'ratio':>8s}")
        for view in ("cockpit", "watch"):
            for key, label in (
                ("rss_mb", "RSS MB"),
                ("peak_mb", "peak RSS MB"),
                ("first_rows_s", "start to first rows, s"),
            ):
                print(
                    f"  {view + ' ' + label:36s} {small[view][key]:8.2f} {big[view][key]:8.2f}"
                    f" {num(m[view + '_ratio'][key], 8, 2)}"
                )
        for r, when in ((small, "small"), (big, "big")):
            page = r["cockpit"]["page_to_rows_s"]
            print(f"  (cockpit, {when} log: {page:.2f} s of it from page load to rows)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", action="store_true", help="measure latency")
    parser.add_argument("--cpu", action="store_true", help="measure idle CPU")
    parser.add_argument("--memory", action="store_true", help="measure memory and first rows")
    parser.add_argument("--handoffs", type=int, default=100, help="latency samples (100)")
    parser.add_argument("--spacing", type=float, default=0.3, help="seconds between (0.3)")
    parser.add_argument("--idle", type=float, default=30.0, help="idle seconds per view (30)")
    parser.add_argument("--events", type=int, default=100_000, help="events logged (100000)")
    parser.add_argument("--starts", type=int, default=3, help="starts timed per view (3)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (args.latency or args.cpu or args.memory):
        args.latency = args.cpu = args.memory = True
    for tool in ("tmux", "git", CHROMIUM):
        if shutil.which(tool) is None:
            print(f"{tool} is missing (./setup.sh installs it)", file=sys.stderr)
            return 1
    # A kill or a hang-up stops the bench as Ctrl-C does: through the clean-up below.
    # SIGINT too: a shell starting the bench in the background has it ignored.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    base = Path(tempfile.mkdtemp(prefix="swarmforge-bench-views-"))
    started = time.perf_counter()
    try:
        report = run(args, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        show(report)
        print(f"({report['seconds']:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
