"""Reading a run spec from a JSON or TOML file, with errors that name the place at fault."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.run.spec.problems import problem
from swarmforge.run.spec.runspec import RunSpec

_TOML_AT = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)\Z")


def parse_spec(data: object, path: str) -> RunSpec:
    """Validate a parsed run spec document; CorruptFile names the place at fault."""
    if not isinstance(data, dict):
        raise CorruptFile(path, None, "a run spec is an object with a goal and tasks")
    try:
        return RunSpec.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        error = CorruptFile(path, None, problem(errors[0]))
        # A few more problems help; a hundred lines of them do not.
        error.details = tuple(problem(e) for e in errors[1:10])
        raise error from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            # json keeps the last of two equal keys silently; a spec is never that ambiguous.
            raise ValueError(f"duplicate key '{key}'")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _parse(text: str, path: str, kind: str) -> object:
    if kind == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # tomllib names the line only inside its message (until Python 3.14).
            message, found = str(exc), _TOML_AT.search(str(exc))
            if found is None:
                raise CorruptFile(path, None, f"invalid TOML: {message}") from None
            line = int(found.group(1)) if found.group(1) else max(len(text.splitlines()), 1)
            raise CorruptFile(path, line, f"invalid TOML: {message[: found.start()]}") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise CorruptFile(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # from the hooks: JSON that parses but means two things
        raise CorruptFile(path, None, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise CorruptFile(path, None, "invalid JSON: nested too deeply") from None


def load_spec(path: str) -> RunSpec:
    """Read and validate a run spec (.json or .toml); CorruptFile names the file and place."""
    kind = os.path.splitext(path)[1].lower()  # noqa: PTH122 - .suffix differs: "..json", "a.json/"
    if kind not in (".json", ".toml"):
        raise CorruptFile(path, None, "a run spec is a .json or a .toml file")
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SwarmforgeError(f"Run spec not found at {path}") from None
    except OSError as exc:
        raise SwarmforgeError(f"Cannot read run spec {path}: {exc.strerror}") from None
    try:
        # utf-8-sig: a byte-order mark some editors write is not part of the document.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorruptFile(path, data[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None
    return parse_spec(_parse(text, path, kind), path)
