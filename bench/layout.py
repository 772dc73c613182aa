"""The package's shape: lines, the median module, each folder's share, import circles and
imports that point upward, now and at an earlier commit.

    .venv/bin/python bench/layout.py [--before REV] [--json]

Imports inside functions count like any other. The layers, lowest first, are LAYERS
below; a module may import its own folder, the base modules and the folders below it.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Lowest first. "" is the base modules at the top of the package.
LAYERS = (
    "",
    "proc",
    "tmux",
    "git",
    "config",
    "handoff",
    "agents",
    "net",
    "daemon",
    "run",
    "swarm",
    "views",
    "doctor",
    "rehearse",
    "cli",
)


def modules(tree: Path) -> dict[str, str]:
    """Every module of the package under `tree`, by dotted name: its source."""
    found = {}
    for path in sorted((tree / "swarmforge").rglob("*.py")):
        parts = path.relative_to(tree).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path.read_text()
    return found


def imports(name: str, source: str, known: dict[str, str]) -> set[str]:
    """The package's modules that `name` imports, anywhere in it."""
    package = name if known[name] and name.count(".") == 0 else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                found.add(whole if whole in known else base)
    return {m for m in found if m in known and m != name}


def folder(name: str) -> str:
    """The folder of the package a module lies in; "" for the base modules."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else ""


def layer(name: str) -> int:
    if name == "swarmforge.__main__":
        return LAYERS.index("cli")
    return LAYERS.index(folder(name)) if folder(name) in LAYERS else -1


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        top = stack.pop()
                        on.discard(top)
                        group.append(top)
                        if top == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def shape(tree: Path) -> dict[str, object]:
    known = modules(tree)
    graph = {name: imports(name, source, known) for name, source in known.items()}
    lines = {name: len(source.splitlines()) for name, source in known.items()}
    total = sum(lines.values())
    folders: dict[str, int] = {}
    for name, count in lines.items():
        folders[folder(name) or "(base)"] = folders.get(folder(name) or "(base)", 0) + count
    upward = sorted(
        f"{a} -> {b}"
        for a, deps in graph.items()
        for b in deps
        if folder(a) != folder(b) and layer(b) > layer(a)
    )
    largest = max(folders, key=lambda f: folders[f])
    return {
        "modules": len(lines),
        "lines": total,
        "median_module": statistics.median(lines.values()),
        "largest_folder": largest,
        "largest_share": round(folders[largest] / total, 3),
        "folders": {f: round(n / total, 3) for f, n in sorted(folders.items())},
        "circles": circles(graph),
        "upward": upward,
    }


def at_commit(rev: str) -> dict[str, object]:
    """The shape of the package as it was at `rev` (read from git, no checkout)."""
    scratch = Path(subprocess.run(["mktemp", "-d"], capture_output=True, text=True).stdout.strip())
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev, "swarmforge"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
        return shape(scratch)
    finally:
        subprocess.run(["rm", "-rf", str(scratch)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="also measure the package at REV")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = {"now": shape(REPO)}
    if args.before:
        result["before"] = at_commit(args.before)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for when, got in result.items():
        print(
            f"{when}: {got['modules']} modules, {got['lines']} lines, "
            f"median module {got['median_module']} lines, largest folder "
            f"{got['largest_folder']} {got['largest_share']:.0%}, "
            f"{len(got['circles'])} circles, {len(got['upward'])} upward imports"
        )
    now = result["now"]
    for group in now["circles"]:
        print("circle:", " ".join(group))
    for edge in now["upward"]:
        print("upward:", edge)
    print("folders:", ", ".join(f"{f} {s:.0%}" for f, s in now["folders"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
