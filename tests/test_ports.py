"""Deterministic ports: stable across processes, in range, collisions resolved the same way."""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmforge.errors import SwarmforgeError
from swarmforge.ports import PORT_MAX, PORT_MIN, assign_ports, port_for

BRANCHES = ["swarm/r1/coder", "swarm/r1/qa", "swarm/run-2/cleaner", "main", "swarm/ü/ß"]


def _colliding_pair(home: int | None = None) -> tuple[str, str]:
    """Two real branch names with the same home port (at `home`, if given), by brute force."""
    seen: dict[int, str] = {}
    for i in itertools.count():
        name = f"swarm/run/task-{i}"
        port = port_for(name)
        if home is not None and port != home:
            continue
        if port in seen:
            return seen[port], name
        seen[port] = name
    raise AssertionError("unreachable")


def test_ports_are_stable_across_hash_seeds() -> None:
    code = "import sys; from swarmforge.ports import port_for; print(*map(port_for, sys.argv[1:]))"
    expected = " ".join(str(port_for(b)) for b in BRANCHES)
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, *BRANCHES], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == expected.split()


def test_port_is_the_documented_hash() -> None:
    digest = hashlib.sha256(b"swarm/r1/coder").digest()
    assert port_for("swarm/r1/coder") == 4000 + int.from_bytes(digest[:8], "big") % 1000


@given(st.text(max_size=60))
def test_port_is_in_range(branch: str) -> None:
    assert PORT_MIN <= port_for(branch) < PORT_MAX


def test_collision_goes_to_the_next_port_in_sorted_order() -> None:
    first, second = sorted(_colliding_pair())
    home = port_for(first)
    assert assign_ports([second, first]) == {first: home, second: home + 1}
    assert assign_ports([first, second]) == {first: home, second: home + 1}


def test_collision_at_the_top_wraps_to_the_bottom() -> None:
    first, second = sorted(_colliding_pair(home=PORT_MAX - 1))
    assert assign_ports([first, second]) == {first: PORT_MAX - 1, second: PORT_MIN}


def _wrap(port: int) -> int:
    return PORT_MIN + (port - PORT_MIN) % (PORT_MAX - PORT_MIN)


def test_uncontested_branch_keeps_its_home_port_even_when_probing_passes_it() -> None:
    first, second = sorted(_colliding_pair())
    home = port_for(first)
    # Sorts after both: a single sorted pass would hand its port to `second`.
    neighbour = next(
        f"swarm/zzz/{i}" for i in itertools.count() if port_for(f"swarm/zzz/{i}") == _wrap(home + 1)
    )
    ports = assign_ports([neighbour, second, first])
    assert ports == {first: home, neighbour: _wrap(home + 1), second: _wrap(home + 2)}


@settings(max_examples=50)
@given(st.permutations([*BRANCHES, *_colliding_pair(), *_colliding_pair(PORT_MAX - 1)]))
def test_assignment_is_independent_of_input_order(branches: list[str]) -> None:
    ports = assign_ports(branches)
    assert ports == assign_ports(sorted(branches))
    assert len(set(ports.values())) == len(ports)
    assert all(PORT_MIN <= p < PORT_MAX for p in ports.values())


def test_duplicates_count_once() -> None:
    assert assign_ports(["a", "a", "b"]) == assign_ports(["b", "a"])


def test_more_branches_than_ports_is_an_error() -> None:
    with pytest.raises(SwarmforgeError, match="1001 branches"):
        assign_ports(f"b{i}" for i in range(1001))


def test_a_full_range_is_a_permutation() -> None:
    ports = assign_ports(f"b{i}" for i in range(1000))
    assert sorted(ports.values()) == list(range(PORT_MIN, PORT_MAX))
