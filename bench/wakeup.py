"""Wake-up latency and start-up time of real agents (claude and codex) in the swarm.

A two-role swarm (a claude coder in the main checkout, a codex cleaner in a
worktree) runs in tmux against the scripted model on loopback, which ends every
turn at once. Measured:

- `up`: from calling `up` to each agent's first model request;
- wake-up: from `swarmforge send` queueing a handoff for an idle agent to that
  agent's next model request (gate, delivery, the daemon's wake-up, the agent's
  own reaction), `--count` times per agent. claude is woken through its own inbox
  (its messaging socket), codex by typing into its pane;
- baseline, measured in the same run and interleaved with the wake-ups: the same
  wake line pasted straight into the agent's pane and Enter pressed, as a person
  would (no gate, no daemon, no look at the agent's state), to the agent's next
  model request. The ratio shows what the swarm adds to the agent's own reaction
  time;
- the state check alone: how long the daemon takes to judge that an agent is at
  its idle prompt before it types a wake-up (daemon/wake.py), in the same run (what
  a typed wake-up pays; one through an inbox needs none).

Run: .venv/bin/python bench/wakeup.py [--count 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swarmforge.daemon.wake import PASTE_SETTLE, WAKE_LINE, agent_judge
from swarmforge.handoff import fromuser
from swarmforge.rehearse.agentenv import agent_env
from swarmforge.rehearse.model import ModelServer
from swarmforge.rehearse.wire import Reply
from swarmforge.swarm.session.down import down
from swarmforge.swarm.session.up import up
from swarmforge.tmux.server import Tmux, project_socket

ROLES = {"coder": "claude", "cleaner": "codex"}
SETTLE = 1.0  # seconds for an agent to finish drawing its last turn before the next wake-up
TIMEOUT = 30.0


def _git(cwd: Path | str, *args: str) -> None:
    subprocess.run(
        ["git", "-C", cwd, "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        check=True,
        capture_output=True,
    )


def make_project(root: Path) -> str:
    """A git project whose swarm is a claude coder and a codex cleaner."""
    conf = root / "swarmforge"
    (conf / "roles").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (conf / "swarmforge.conf").write_text(
        "window coder claude master\nwindow cleaner codex cleaner\n"
    )
    (conf / "constitution.prompt").write_text("Work carefully.\n")
    for role in ROLES:
        (conf / "roles" / f"{role}.prompt").write_text(f"You are the {role}.\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "swarm")
    return str(root)


def next_request(server: ModelServer, role: str, after: float) -> float:
    """When `role`'s agent next asked the model after `after` (time.time()): a new turn,
    or, for a message its inbox took, the request that carries it."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        for exchange in server.exchanges(role):
            if not exchange.side and exchange.at > after:
                return exchange.at
        time.sleep(0.002)
    raise SystemExit(f"{role} made no request within {TIMEOUT:.0f} s")


def summary(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (
        f"{name:32s} n={len(values):3d}  p50 {statistics.median(values) * 1000:7.0f} ms  "
        f"p90 {p90 * 1000:7.0f} ms  max {ordered[-1] * 1000:7.0f} ms"
    )


def measure(root: str, count: int) -> None:
    server = ModelServer(lambda exchange: Reply(text="ok"))
    server.start()
    env = {
        role: agent_env(agent, str(Path(root, "..", "homes", role)), root, server.base_url(role))
        for role, agent in ROLES.items()
    }
    try:
        started = time.time()
        up(root, "tmux", stagger=0.0, role_env=env)
        firsts = {role: next_request(server, role, started) - started for role in ROLES}
        for role, seconds in firsts.items():
            print(f"up to first model request: {role} ({ROLES[role]}) {seconds * 1000:.0f} ms")
        print(f"up to both agents' first request: {max(firsts.values()) * 1000:.0f} ms")
        tmux = Tmux(project_socket(root))
        judge = agent_judge(root)
        for role, agent in ROLES.items():
            woken: list[float] = []
            typed: list[float] = []
            judged: list[float] = []
            for n in range(count):
                time.sleep(SETTLE)
                sent = time.time()
                fromuser.send(root, role, f"Benchmark handoff {n}.")
                woken.append(next_request(server, role, sent) - sent)
                time.sleep(SETTLE)
                start = time.perf_counter()
                why = judge(root, role)
                judged.append(time.perf_counter() - start)
                if why is not None:
                    raise SystemExit(f"{role} is not at its prompt: {why}")
                pasted = time.time()
                target = f"=swarmforge-{role}:"
                tmux.paste(target, WAKE_LINE, "bench")
                time.sleep(PASTE_SETTLE)
                tmux.press(target, "Enter")
                typed.append(next_request(server, role, pasted) - pasted)
            print(summary(f"wake-up via the swarm, {agent}", woken))
            print(summary(f"baseline: pasted by hand, {agent}", typed))
            print(summary(f"state check before a wake-up, {agent}", judged))
            ratio = statistics.median(woken) / statistics.median(typed)
            print(f"{'ratio of medians (swarm / hand)':32s} {ratio:.2f}")
    finally:
        down(root, purge=True)
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20, help="wake-ups per agent (default 20)")
    ns = parser.parse_args()
    for agent in ROLES.values():
        if shutil.which(agent) is None:
            print(
                f"{agent} is not on PATH (./setup.sh installs it into .venv/bin)", file=sys.stderr
            )
            return 1
    work = tempfile.mkdtemp(prefix="swarmforge-bench-wakeup-")
    try:
        measure(make_project(Path(work, "project")), ns.count)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
