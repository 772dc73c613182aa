"""`init`: lay out a project's swarmforge/ directory from one of the shipped packs.

A pack is `conf/<pack>/` (its `swarmforge.conf` and its own constitution
articles). Scaffolding copies it, the shipped constitution, the shared articles
and the prompt of every agent role into `<dir>/swarmforge/`, as `load_config`
expects them, and writes two TOML files made for the pack's roles (with
tomli-w): `swarmforge.toml`, the settings swarmforge.conf has no word for, and
`rehearse.toml`, an example rehearsal script. Existing files are never
replaced unless asked: without `force` either every file is written or none is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from swarmforge import filewrite, fsutil
from swarmforge.config import examples
from swarmforge.config.conf import parse_config, role_prompt_path
from swarmforge.config.examples import REHEARSAL_FILE
from swarmforge.config.prompts import (
    ARTICLES_DIR,
    article_names,
    shipped_articles_dir,
    shipped_packs_dir,
    shipped_roles_dir,
)
from swarmforge.config.roster import CONSTITUTION_FILE, SwarmConfig
from swarmforge.config.settings import settings_path
from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.git import repo
from swarmforge.layout import CONFIG_FILE

DEFAULT_PACK = "two-pack"
PACK_CONFIG = "swarmforge.conf"


@dataclass(frozen=True)
class Copy:
    """One file to scaffold: where it goes, and the shipped file it comes from or its bytes."""

    target: str
    source: str
    data: bytes | None = None

    def read(self) -> bytes:
        """The file's contents."""
        if self.data is not None:
            return self.data
        return Path(self.source).read_bytes()


@dataclass(frozen=True)
class Scaffolded:
    """What `init` did: the pack, the project directory and the files written."""

    pack: str
    dir: str
    written: list[str]
    # The project has history: `up` does not commit for it, and worktree roles
    # read only what is committed, so swarmforge/ must be committed first.
    commit_first: bool = False


def packs() -> list[str]:
    """The names of the shipped packs, sorted."""
    try:
        entries = list(Path(shipped_packs_dir()).iterdir())
    except FileNotFoundError:
        return []
    return sorted(e.name for e in entries if (e / PACK_CONFIG).is_file())


def pack_config(pack: str) -> SwarmConfig:
    """The parsed configuration of shipped pack `pack`; an error lists the packs if unknown."""
    names = packs()
    if pack not in names:
        raise SwarmforgeError(
            f"Unknown pack '{pack}'.",
            details=(f"Available packs: {', '.join(names) or '(none shipped)'}",),
            hint="Pick one with `swarmforge init --pack NAME`.",
        )
    path = Path(shipped_packs_dir(), pack, PACK_CONFIG)
    return parse_config(path.read_text(encoding="utf-8"), str(path))


def _articles(pack: str, root: Path) -> dict[str, str]:
    """Target -> source of every article; a pack's own article wins over a shared namesake."""
    sources: dict[str, str] = {}
    for directory in (
        Path(shipped_articles_dir()),
        Path(shipped_packs_dir(), pack, "constitution", "articles"),
    ):
        for name in article_names(directory):
            sources[str(root / ARTICLES_DIR / name)] = str(directory / name)
    return sources


def plan(pack: str, directory: str) -> list[Copy]:
    """Every file `init` writes for `pack` into the project at `directory`."""
    root = Path(os.path.abspath(directory))  # noqa: PTH100 - ".." removed, symlinks kept
    config = pack_config(pack)
    roles = Path(shipped_roles_dir())
    copies = [
        Copy(str(root / CONFIG_FILE), str(Path(shipped_packs_dir(), pack, PACK_CONFIG))),
        Copy(str(root / CONSTITUTION_FILE), str(roles / "constitution.prompt")),
    ]
    copies += [Copy(t, s) for t, s in sorted(_articles(pack, root).items())]
    for role in config.roles:
        if role.is_exec:
            continue  # an exec role runs a command and reads no prompt
        source = roles / f"{role.name}.prompt"
        if not source.is_file():
            raise CorruptFile(config.path, role.line, f"no shipped prompt for role '{role.name}'")
        copies.append(Copy(role_prompt_path(root, role.name), str(source)))
    generated = "(generated for the pack's roles)"
    copies.append(Copy(settings_path(root), generated, examples.settings(config)))
    copies.append(Copy(str(root / REHEARSAL_FILE), generated, examples.rehearsal(config)))
    return copies


def _refuse(existing: list[str]) -> SwarmforgeError:
    return SwarmforgeError(
        f"Not scaffolding: {len(existing)} file(s) exist already; nothing was written.",
        details=tuple(f"  {path}" for path in existing),
        hint="Use `swarmforge init --force` to replace them.",
    )


def _publish_new(copy: Copy) -> bool:
    """Write `copy` unless its target exists (then False); a link, so nothing is replaced."""
    tmp = filewrite.temp_name(copy.target)
    try:
        filewrite.write_new(tmp, copy.read())
    except BaseException:
        if os.path.lexists(tmp):
            Path(tmp).unlink()
        raise
    return filewrite.publish(tmp, copy.target)


def write_all_or_none(copies: list[Copy]) -> None:
    """Publish every file without replacing any; on any failure, take back what was published."""
    published: list[str] = []
    try:
        for copy in copies:
            if not _publish_new(copy):
                # It appeared after the check: it is someone else's, and it stays.
                raise _refuse([copy.target])
            published.append(copy.target)
    except BaseException:
        for path in published:
            Path(path).unlink()
        raise
    for directory in sorted({Path(path).parent for path in published}, key=str):
        fsutil.fsync_dir(str(directory))


def make_dirs(copies: list[Copy]) -> None:
    """Make the directories every copy lands in."""
    for directory in sorted({Path(c.target).parent for c in copies}, key=str):
        directory.mkdir(parents=True, exist_ok=True)


def init(directory: str, pack: str = DEFAULT_PACK, *, force: bool = False) -> Scaffolded:
    """Scaffold `<directory>/swarmforge/` from `pack`; refuses to replace files unless `force`."""
    root = os.path.abspath(directory)  # noqa: PTH100 - ".." removed, symlinks kept
    if os.path.lexists(root) and not Path(root).is_dir():
        raise SwarmforgeError(f"{root} exists and is not a directory.")
    copies = plan(pack, root)
    existing = [c.target for c in copies if os.path.lexists(c.target)]
    if existing and not force:
        raise _refuse(existing)
    try:
        make_dirs(copies)
        if force:
            for copy in copies:
                filewrite.atomic_write(copy.target, copy.read())
        else:
            write_all_or_none(copies)
    except OSError as exc:
        # A replace names the temporary file first and the target second: name the target.
        where = exc.filename2 or exc.filename or root
        raise SwarmforgeError(f"Cannot write {where}: {exc.strerror or exc}.") from None
    checkout = repo.open_checkout(root)
    has_history = checkout is not None and checkout.head is not None
    return Scaffolded(pack, root, [c.target for c in copies], commit_first=has_history)
