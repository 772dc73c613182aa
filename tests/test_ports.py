"""Deterministic ports: stable across processes, in range, per project, collisions and ports
in use resolved the same way, and ports held by other processes reported."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmforge import tagging
from swarmforge.config import sessionrecord
from swarmforge.config.conf import load_config
from swarmforge.config.rolerecord import RoleRecord
from swarmforge.config.sessionrecord import SessionRecord
from swarmforge.errors import SwarmforgeError
from swarmforge.ports import (
    PORT_MAX,
    PORT_MIN,
    assign_ports,
    is_bound,
    port_for,
    project_identity,
)
from swarmforge.swarm import placement, portholders
from tests.support import copy_tree, git, make_swarm
from tests.support import run_cli as sf

P = "/srv/shop"  # a project: its main checkout's real path
BRANCHES = ["swarm/r1/coder", "swarm/r1/qa", "swarm/run-2/cleaner", "main", "swarm/ü/ß"]


def _colliding_pair(home: int | None = None) -> tuple[str, str]:
    """Two real branch names with the same home port (at `home`, if given), by brute force."""
    seen: dict[int, str] = {}
    for i in itertools.count():
        name = f"swarm/run/task-{i}"
        port = port_for(name, P)
        if home is not None and port != home:
            continue
        if port in seen:
            return seen[port], name
        seen[port] = name
    raise AssertionError("unreachable")


def test_ports_are_stable_across_hash_seeds() -> None:
    code = (
        "import sys; from swarmforge.ports import port_for; "
        f"print(*(port_for(b, {P!r}) for b in sys.argv[1:]))"
    )
    expected = " ".join(str(port_for(b, P)) for b in BRANCHES)
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, *BRANCHES], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == expected.split()


@given(st.text(max_size=60))
def test_port_is_in_range(branch: str) -> None:
    assert PORT_MIN <= port_for(branch, P) < PORT_MAX


def test_collision_goes_to_the_next_port_in_sorted_order() -> None:
    first, second = sorted(_colliding_pair())
    home = port_for(first, P)
    assert assign_ports([second, first], P) == {first: home, second: home + 1}
    assert assign_ports([first, second], P) == {first: home, second: home + 1}


def test_collision_at_the_top_wraps_to_the_bottom() -> None:
    first, second = sorted(_colliding_pair(home=PORT_MAX - 1))
    assert assign_ports([first, second], P) == {first: PORT_MAX - 1, second: PORT_MIN}


def _wrap(port: int) -> int:
    return PORT_MIN + (port - PORT_MIN) % (PORT_MAX - PORT_MIN)


def test_uncontested_branch_keeps_its_home_port_even_when_probing_passes_it() -> None:
    first, second = sorted(_colliding_pair())
    home = port_for(first, P)
    # Sorts after both: a single sorted pass would hand its port to `second`.
    neighbour = next(
        f"swarm/zzz/{i}"
        for i in itertools.count()
        if port_for(f"swarm/zzz/{i}", P) == _wrap(home + 1)
    )
    ports = assign_ports([neighbour, second, first], P)
    assert ports == {first: home, neighbour: _wrap(home + 1), second: _wrap(home + 2)}


@settings(max_examples=50)
@given(st.permutations([*BRANCHES, *_colliding_pair(), *_colliding_pair(PORT_MAX - 1)]))
def test_assignment_is_independent_of_input_order(branches: list[str]) -> None:
    ports = assign_ports(branches, P)
    assert ports == assign_ports(sorted(branches), P)
    assert len(set(ports.values())) == len(ports)
    assert all(PORT_MIN <= p < PORT_MAX for p in ports.values())


def test_duplicates_count_once() -> None:
    assert assign_ports(["a", "a", "b"], P) == assign_ports(["b", "a"], P)


def test_more_branches_than_ports_is_an_error() -> None:
    with pytest.raises(SwarmforgeError, match="1001 branches"):
        assign_ports((f"b{i}" for i in range(1001)), P)


def test_a_full_range_is_a_permutation() -> None:
    ports = assign_ports((f"b{i}" for i in range(1000)), P)
    assert sorted(ports.values()) == list(range(PORT_MIN, PORT_MAX))


# The project is part of the port: two swarms on one machine never share one by default.


def test_the_project_is_part_of_the_documented_hash() -> None:
    digest = hashlib.sha256(b"/home/me/shop\0master").digest()
    assert port_for("master", "/home/me/shop") == 4000 + int.from_bytes(digest[:8], "big") % 1000


def test_a_project_is_its_main_checkout_seen_from_any_of_its_worktrees(repo: Path) -> None:
    tree = repo / ".worktrees" / "coder"
    git(repo, "worktree", "add", "-q", "-b", "swarm/r1/coder", str(tree))
    main = os.path.realpath(repo)
    assert project_identity(str(repo)) == project_identity(str(tree)) == main
    plain = repo.parent / "not-a-checkout"
    plain.mkdir()
    assert project_identity(str(plain)) == os.path.realpath(plain)


def test_two_projects_give_a_role_on_the_same_branch_different_ports(
    repo: Path, tmp_path: Path
) -> None:
    one = make_swarm(repo, "window lead exec master task sh -c 'cat'\n")
    two = copy_tree(one, tmp_path / "other")
    given = [placement.plan(str(p), load_config(str(p)), "r1") for p in (one, two)]
    assert given[0][0].branch == given[1][0].branch == "main"
    assert given[0][0].port != given[1][0].port
    assert given[1][0].port == port_for("main", os.path.realpath(two))


def _listen(port: int = 0) -> socket.socket:
    """A socket of this test listening on 127.0.0.1:`port` (any free port for 0)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_a_bound_port_is_seen_as_bound_and_a_closed_one_as_free() -> None:
    with _listen() as sock:
        port = sock.getsockname()[1]
        assert is_bound(port)
    assert not is_bound(port)


def test_a_bound_home_port_goes_to_the_next_free_one() -> None:
    first, second = sorted(_colliding_pair())
    home = port_for(first, P)
    held = {home, _wrap(home + 2)}
    ports = assign_ports([first, second], P, bound=held.__contains__)
    assert ports == {first: _wrap(home + 1), second: _wrap(home + 3)}


def test_a_kept_port_stays_unless_another_process_holds_it() -> None:
    first, second = sorted(_colliding_pair())
    home = port_for(first, P)
    kept = {first: _wrap(home + 7), second: _wrap(home + 7)}  # a duplicate is kept once
    ports = assign_ports([first, second], P, kept=kept)
    assert ports == {first: _wrap(home + 7), second: home}
    moved = assign_ports(
        [first], P, kept={first: _wrap(home + 7)}, bound={_wrap(home + 7)}.__contains__
    )
    assert moved == {first: home}


def test_when_every_port_is_held_assignment_says_so() -> None:
    with pytest.raises(SwarmforgeError, match="No free port"):
        assign_ports(["a"], P, bound=lambda port: True)


def _tagged_listener(root: Path, run_id: str, role: str) -> tuple[subprocess.Popen[str], int]:
    """A process tagged as `role`'s (as `up` tags them), listening on a free port."""
    code = (
        "import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
        "print(s.getsockname()[1], flush=True); sys.stdin.read()"
    )
    env = {**os.environ, **tagging.tags(run_id, str(root)), "SWARMFORGE_ROLE": role}
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, int(child.stdout.readline())


def _role(root: Path, name: str, port: int) -> RoleRecord:
    return RoleRecord(
        name=name,
        agent="exec",
        worktree="master",
        path=str(root),
        branch="main",
        port=port,
        mode="task",
    )


def test_a_roles_own_listener_is_no_conflict_and_another_process_is(repo: Path) -> None:
    root = Path(os.path.realpath(repo))
    child, own = _tagged_listener(root, "r1", "coder")
    try:
        with _listen() as foreign:
            theirs = foreign.getsockname()[1]
            record = SessionRecord(
                run_id="r1",
                project=str(root),
                backend="headless",
                state="running",
                started_at="2026-01-01T00:00:00Z",
                roles=[_role(root, "coder", own), _role(root, "qa", theirs)],
            )
            held = portholders.port_holders(str(root), record)
            assert held == {"qa": portholders.PortHolder(os.getpid(), psutil.Process().name())}
            # The same listener on another role's port is that role's conflict.
            record.roles[1].port = own
            record.roles[0].port = theirs
            assert set(portholders.port_holders(str(root), record)) == {"coder", "qa"}
    finally:
        child.communicate("")


# `up` for real: a headless swarm of one exec role in the main checkout (branch main).

SWARM = "window lead exec master task sh -c 'cat'\nwindow worker exec worker task sh -c 'cat'\n"


def _recorded(root: Path) -> dict[str, RoleRecord]:
    record = sessionrecord.load(str(root))
    assert record is not None
    return {r.name: r for r in record.roles}


@pytest.mark.slow
def test_swarmforge_port_prints_what_up_recorded(repo: Path) -> None:
    make_swarm(repo, SWARM)
    up = sf("up", "--backend", "headless", cwd=repo)
    assert up.returncode == 0, up.stderr
    try:
        roles = _recorded(repo)
        for role in roles.values():
            shown = sf("port", role.branch, "--project", str(repo), cwd=repo.parent)
            assert shown.returncode == 0, shown.stderr
            assert int(shown.stdout) == role.port
        inside = sf("port", roles["worker"].branch, cwd=Path(roles["worker"].path))
        assert int(inside.stdout) == roles["worker"].port
        key = os.fsencode(os.path.realpath(repo)) + b"\0main"
        digest = hashlib.sha256(key).digest()
        assert roles["lead"].port == 4000 + int.from_bytes(digest[:8], "big") % 1000
    finally:
        assert sf("down", cwd=repo).returncode == 0


def _status(repo: Path) -> dict[str, dict[str, object]]:
    shown = sf("status", "--json", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    return {r["role"]: r for r in json.loads(shown.stdout)["roles"]}


@pytest.mark.slow
def test_up_moves_a_role_off_a_bound_port_and_keeps_the_move(repo: Path) -> None:
    make_swarm(repo, "window lead exec master task sh -c 'cat'\n")
    home = port_for("main", os.path.realpath(repo))
    if is_bound(home):
        pytest.skip(f"port {home} is already in use on this machine")
    with _listen(home):
        up = sf("up", "--backend", "headless", cwd=repo)
        assert up.returncode == 0, up.stderr
        given = _recorded(repo)["lead"].port
        assert given == next(p for p in map(_wrap, itertools.count(home + 1)) if not is_bound(p))
        assert f"gets port {given}" in up.stdout + up.stderr
        assert _status(repo)["lead"]["port_conflict"] is None
        assert sf("down", cwd=repo).returncode == 0
    assert not is_bound(home)
    again = sf("up", "--backend", "headless", cwd=repo)
    assert again.returncode == 0, again.stderr
    try:
        assert _recorded(repo)["lead"].port == given
        noted = sf("port", "main", cwd=repo)
        assert int(noted.stdout) == home and f"port {given}" in noted.stderr
    finally:
        assert sf("down", cwd=repo).returncode == 0


@pytest.mark.slow
def test_status_and_doctor_name_a_process_holding_a_roles_port(repo: Path) -> None:
    make_swarm(repo, "window lead exec master task sh -c 'cat'\n")
    up = sf("up", "--backend", "headless", cwd=repo)
    assert up.returncode == 0, up.stderr
    try:
        port = _recorded(repo)["lead"].port
        assert _status(repo)["lead"]["port_conflict"] is None
        with _listen(port):
            held = _status(repo)["lead"]["port_conflict"]
            assert held == {"pid": os.getpid(), "name": psutil.Process().name()}
            text = sf("status", cwd=repo).stdout
            assert f"port {port} is held by pid {os.getpid()}" in text
            checks = {c["check"]: c for c in json.loads(sf("doctor", "--json", cwd=repo).stdout)}
            assert checks["ports"]["status"] == "warn"
            assert f"role lead: port {port} held by pid {os.getpid()}" in checks["ports"]["detail"]
    finally:
        assert sf("down", cwd=repo).returncode == 0
