"""The cockpit's memory while it shows diffs of a branch holding one huge file.

diffs     the cockpit's peak resident memory (VmHWM of its process) after four diff
          views of a role whose branch adds a `--size-mb` file, asked for at once,
          against its peak after one view of a small diff in the same run, and against
          the target (150 MB). A diff is read only up to its limit, so the huge file
          must cost the cockpit no more than a small one does.

  .venv/bin/python bench/cockpitdiff.py [--size-mb 219] [--views 4] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from _common import git  # bench/ is the script's directory, first on sys.path

from swarmforge import times
from swarmforge.config import sessionrecord
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord

TARGET_MB = 150
SWARMFORGE = str(Path(sys.executable).parent / "swarmforge")


def project(root: Path, size_mb: int) -> None:
    """A repository with role `big`, whose branch adds a `size_mb` text file, and role
    `small`, whose branch adds one line; recorded as a running session."""
    git(root, "init", "-q", "-b", "main")
    (root / "README").write_text("project\n")
    git(root, "add", "README")
    git(root, "commit", "-q", "-m", "init")
    roles = []
    for name in ("big", "small"):
        tree = root / ".worktrees" / name
        branch = f"swarm/bench/{name}"
        git(root, "worktree", "add", "-q", "-b", branch, str(tree))
        if name == "big":
            line = b"0123456789abcdef" * 8 + b"\n"
            with (tree / "huge.txt").open("wb") as f:
                for _ in range(size_mb * (1 << 20) // len(line)):
                    f.write(line)
            git(tree, "add", "huge.txt")
        else:
            (tree / "small.txt").write_text("one line\n")
            git(tree, "add", "small.txt")
        git(tree, "commit", "-q", "-m", f"{name} change")
        roles.append(
            RoleRecord(
                name=name,
                agent="exec",
                worktree=name,
                path=str(tree),
                branch=branch,
                port=4900 + len(roles),
                mode="task",
            )
        )
    record = SessionRecord(
        run_id="bench",
        project=str(root),
        backend="headless",
        state="running",
        started_at=times.stamp(),
        roles=roles,
    )
    sessionrecord.save(str(root), record)


def peak_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+)", status)
    return int(found[1]) / 1024 if found else 0.0


def _open_page(base: str) -> None:
    """Hold the page's stream open (a thread of its own) until the cockpit stops."""
    try:
        with urllib.request.urlopen(f"{base}/stream", timeout=600) as stream:
            while stream.read(1024):
                pass
    except OSError:
        return


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=300) as answer:
        return len(answer.read())


def measure(size_mb: int, views: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        project(root, size_mb)
        made = time.perf_counter() - started
        cockpit = subprocess.Popen(
            [SWARMFORGE, "cockpit", "--json", "--project", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PATH": f"{Path(SWARMFORGE).parent}:/usr/bin:/bin"},
        )
        try:
            assert cockpit.stdout is not None
            base = json.loads(cockpit.stdout.readline())["url"].rstrip("/")
            # The cockpit reads the swarm only while a page is open: one is, as a person's.
            threading.Thread(target=_open_page, args=(base,), daemon=True).start()
            deadline = time.monotonic() + 60
            while True:  # until the hub has read the swarm and knows the roles
                try:
                    get(f"{base}/roles/small/diff")
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("the cockpit never knew the roles") from None
                    time.sleep(0.2)
            small = peak_mb(cockpit.pid)
            sizes: list[int] = []
            threads = [
                threading.Thread(target=lambda: sizes.append(get(f"{base}/roles/big/diff")))
                for _ in range(views)
            ]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            seconds = time.perf_counter() - started
            big = peak_mb(cockpit.pid)
        finally:
            cockpit.terminate()
            cockpit.wait(timeout=30)
    return {
        "file_mb": size_mb,
        "views": views,
        "made_s": round(made, 1),
        "views_s": round(seconds, 2),
        "answer_bytes": max(sizes) if sizes else 0,
        "peak_after_small_diff_mb": round(small, 1),
        "peak_after_huge_diffs_mb": round(big, 1),
        "ratio_to_small": round(big / small, 2) if small else None,
        "ratio_to_target": round(big / TARGET_MB, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=219)
    parser.add_argument("--views", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = measure(args.size_mb, args.views)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
