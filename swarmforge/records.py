"""Reading a JSON state file or a TOML file into a pydantic model, rejecting a damaged one
by name."""

from __future__ import annotations

import json
import tomllib
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from swarmforge import fsutil
from swarmforge.errors import CorruptFile

M = TypeVar("M", bound=BaseModel)

# Far above any record swarmforge writes (a run's checkpoint of thousands of tasks is a few
# megabytes): a file larger than this was not written by it, and is refused unread.
RECORD_LIMIT = 64 * 1024 * 1024


def describe(exc: ValidationError) -> str:
    """The first problem pydantic found, as `field.path: message`."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def read_json_model(path: str, model: type[M], limit: int = RECORD_LIMIT) -> M | None:
    """The JSON document at `path` as a `model`; None if there is no file, CorruptFile
    (naming the file, and the line where JSON says) if it does not parse or validate, is
    not a regular file (a FIFO is never waited on) or is larger than `limit` bytes."""
    try:
        data = fsutil.read_regular(path, limit=limit)
    except FileNotFoundError:
        return None
    except (fsutil.NotRegularFile, fsutil.FileTooLarge) as exc:
        raise CorruptFile(path, None, exc.strerror or str(exc)) from None
    try:
        return model.model_validate(json.loads(data))
    except json.JSONDecodeError as exc:
        raise CorruptFile(path, exc.lineno, exc.msg) from None
    except (UnicodeDecodeError, RecursionError):
        raise CorruptFile(path, None, "not a JSON document") from None
    except ValidationError as exc:
        raise CorruptFile(path, None, describe(exc)) from None


def parse_toml_model(data: bytes, path: str, model: type[M]) -> M:
    """The TOML document `data` (read from `path`) as a `model`; CorruptFile names the file
    and the line (as TOML says) or the key at fault."""
    try:
        document = tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise CorruptFile(path, data[: exc.start].count(b"\n") + 1, "not valid UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise CorruptFile(path, None, str(exc)) from None
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise CorruptFile(path, None, describe(exc)) from None
