"""Where the commands of a run are on its PATH: looked up once, remembered, forgotten when
one is gone."""

from __future__ import annotations

from swarmforge.proc import spawn


class Executables:
    """Where each command was found, by (name, PATH)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], str] = {}  # (name, PATH) -> where it was

    def find(self, name: str, path: str) -> str | None:
        """Where `name` is on `path`, remembered (the PATH is the run's); None lets the
        start fail as exec would."""
        if "/" in name:
            return None
        found = self._found.get((name, path))
        if found is None:
            found = spawn.which(name, path)
            if found is not None:
                self._found[(name, path)] = found
        return found

    def forget(self, name: str, path: str) -> bool:
        """Forget where `name` was found on `path`; False if it was not remembered."""
        return self._found.pop((name, path), None) is not None
