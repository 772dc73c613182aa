"""swarmforge/swarmforge.conf: SwarmForge's window lines, parsed and validated on read."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from swarmforge.config.conf import load_config, parse_config
from swarmforge.config.prompts import shipped_packs_dir, shipped_roles_dir
from swarmforge.config.role import display_name
from swarmforge.config.roster import RoleSpec, SwarmConfig
from swarmforge.errors import CorruptFile, SwarmforgeError

CONF = "/p/swarmforge/swarmforge.conf"

# The six-pack's window lines exactly as SwarmForge ships them (note its `hardender`).
SWARMFORGE_SIX_PACK = """\
# window <role> <agent> <worktree> [task|batch] [extra CLI args...]
# Receive mode is optional and defaults to task.
window specifier codex master
window coder codex coder
window cleaner codex cleaner batch
window architect codex architect batch
window hardender codex hardender batch
window QA codex QA batch
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def swarmforge_project(root: Path, conf: str, roles: list[str]) -> Path:
    """A project laid out as SwarmForge lays out a runnable pack branch."""
    write(root / "swarmforge" / "swarmforge.conf", conf)
    write(root / "swarmforge" / "constitution.prompt", "Obey the articles.\n")
    for article in ("project", "local-engineering", "local-workflow"):
        write(root / "swarmforge/constitution/articles" / f"{article}.prompt", f"{article}\n")
    for role in roles:
        write(root / "swarmforge" / "roles" / f"{role}.prompt", f"You are the {role}.\n")
    return root


def one_role(line: str) -> RoleSpec:
    return parse_config(line + "\n", CONF).roles[0]


def test_a_swarmforge_six_pack_directory_parses_unchanged(tmp_path: Path) -> None:
    roles = ["specifier", "coder", "cleaner", "architect", "hardender", "QA"]
    root = swarmforge_project(tmp_path, SWARMFORGE_SIX_PACK, roles)
    config = load_config(str(root))
    assert config.names == tuple(roles)
    assert [r.mode for r in config.roles] == ["task", "task", "batch", "batch", "batch", "batch"]
    assert {r.agent for r in config.roles} == {"codex"}
    assert all(r.visible and r.extra_args == () for r in config.roles)
    assert config.path == str(root / "swarmforge" / "swarmforge.conf")
    specifier, qa = config.role("specifier"), config.role("QA")
    assert specifier.in_main_checkout and specifier.worktree_path(str(root)) == str(root)
    assert qa.worktree_path(str(root)) == str(root / ".worktrees" / "QA")
    assert (qa.line, qa.session_name, qa.display_name) == (8, "swarmforge-QA", "Qa")


def test_swarmforge_extra_cli_args_follow_the_receive_mode_or_the_worktree() -> None:
    config = parse_config(
        "window coder copilot master --yolo\n"
        "window cleaner copilot cleaner batch --allow-all-tools\n",
        CONF,
    )
    coder, cleaner = config.roles
    assert (coder.mode, coder.extra_args) == ("task", ("--yolo",))
    assert (cleaner.mode, cleaner.extra_args) == ("batch", ("--allow-all-tools",))


@pytest.mark.parametrize(
    ("tail", "mode", "argv"),
    [
        ('--model "gpt 5" --yolo', "task", ("--model", "gpt 5", "--yolo")),
        ("task --config 'a b'", "task", ("--config", "a b")),
        ('batch --x="one two"  -v', "batch", ("--x=one two", "-v")),
        ("--path a\\ b", "task", ("--path", "a b")),
        ("-m \"it's\" ''", "task", ("-m", "it's", "")),
        ("--tag '#1' a#b \\#c", "task", ("--tag", "#1", "a#b", "#c")),
        ("--mode batch", "task", ("--mode", "batch")),
        ("taskforce", "task", ("taskforce",)),
        ("$HOME ~ *.py", "task", ("$HOME", "~", "*.py")),
    ],
)
def test_extra_args_are_an_argv_split_by_posix_shell_quoting(
    tail: str, mode: str, argv: tuple[str, ...]
) -> None:
    role = one_role(f"window coder codex coder {tail}")
    assert (role.mode, role.extra_args) == (mode, argv)


# Printable characters: what a config line may hold (Python's definition, plus space).
PRINTABLE = st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"))


@given(st.lists(st.text(PRINTABLE | st.just(" "), max_size=12), max_size=6))
def test_any_argv_written_with_shell_quoting_comes_back_unchanged(argv: list[str]) -> None:
    role = one_role(f"window coder codex coder batch {shlex.join(argv)}")
    assert role.extra_args == tuple(argv)


def test_tabs_crlf_blank_lines_and_indented_comments_are_accepted() -> None:
    text = "\r\n  # a comment\r\n\t\r\nwindow\tcoder\tcodex\tmaster\ttask\t-v\r\n"
    role = parse_config(text, CONF).roles[0]
    assert (role.name, role.worktree, role.extra_args, role.line) == ("coder", "master", ("-v",), 4)


def test_window_invisible_declares_a_role_without_a_window() -> None:
    config = parse_config("window a codex master\nwindow-invisible b claude b batch\n", CONF)
    assert [(r.name, r.visible, r.mode) for r in config.roles] == [
        ("a", True, "task"),
        ("b", False, "batch"),
    ]


def test_agents_are_lowercased_like_swarmforge_but_other_commands_keep_their_name() -> None:
    assert one_role("window a Claude master").agent == "claude"
    assert one_role("window a EXEC master pytest").agent == "exec"
    assert one_role("window a MyAgent master").agent == "MyAgent"


def test_master_and_none_are_the_main_checkout_and_may_be_shared() -> None:
    config = parse_config("window a codex master\nwindow b codex none\nwindow c codex master\n")
    assert all(role.in_main_checkout for role in config.roles)
    assert config.roles[1].worktree_path("/p/x/..") == "/p"


def test_exec_roles_take_their_command_from_the_extra_args() -> None:
    role = one_role("window tests exec tests batch python -m pytest -q")
    assert role.is_exec and role.mode == "batch"
    assert role.extra_args == ("python", "-m", "pytest", "-q")


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("window coder codex master\nwindow coder codex other\n", 2, "Duplicate role 'coder'"),
        ("\n\nwindow a codex w\nwindow b codex w\n", 4, "Duplicate worktree 'w'"),
        ("# c\nwindow a codex\n", 2, "expected 'window <role> <agent> <worktree>"),
        ("pane a codex master\n", 1, "Unknown config directive 'pane'"),
        ("account me codex master\n", 1, "Unknown config directive 'account'"),
        ("window a_b codex master\n", 1, "may not contain '_'"),
        ("window a/b codex master\n", 1, "may not contain '_'"),
        ("window a codex ../up\n", 1, "Invalid worktree '../up' for role 'a'"),
        ("window a codex x/y\n", 1, "Invalid worktree 'x/y' for role 'a'"),
        ("window a codex ..\n", 1, "Invalid worktree '..' for role 'a'"),
        ("window a codex -x\n", 1, "Invalid worktree '-x' for role 'a'"),
        ("window a codex b.lock\n", 1, "Invalid worktree 'b.lock'"),
        ("window a exec w\n", 1, "exec role 'a' needs a command"),
        ("window a exec w batch\n", 1, "exec role 'a' needs a command"),
        ("window a codex w --x 'open\n", 1, "extra arguments: No closing quotation"),
        ("window a codex w # the coder\n", 1, "a '#' comment must be on its own line"),
        ("window a codex w \x1b[31m\n", 1, "control character in line"),
        ("# nothing here\n\n", None, "No windows defined"),
    ],
)
def test_every_parse_error_names_the_file_and_line(
    text: str, line: int | None, problem: str
) -> None:
    with pytest.raises(CorruptFile) as caught:
        parse_config(text, CONF)
    error = caught.value
    assert (error.path, error.line) == (CONF, line)
    assert problem in error.problem
    where = f"{CONF}, line {line}" if line is not None else CONF
    assert error.message == f"{where}: {error.problem}"


def test_a_duplicate_role_says_exactly_so() -> None:
    with pytest.raises(CorruptFile) as caught:
        parse_config("window coder codex master\nwindow coder codex other\n", CONF)
    assert caught.value.problem == "Duplicate role 'coder'"


def test_models_refuse_what_the_parser_refuses() -> None:
    coder = RoleSpec(name="coder", agent="codex", worktree="w")
    with pytest.raises(ValidationError, match="Duplicate role 'coder'"):
        SwarmConfig(roles=(coder, coder.model_copy(update={"worktree": "v"})))
    with pytest.raises(ValidationError, match="Duplicate worktree 'w'"):
        SwarmConfig(roles=(coder, coder.model_copy(update={"name": "other"})))
    with pytest.raises(ValidationError, match="No windows defined"):
        SwarmConfig(roles=())
    with pytest.raises(ValidationError, match="Invalid agent"):
        RoleSpec(name="coder", agent="two words", worktree="w")
    with pytest.raises(ValidationError):
        RoleSpec(name="coder", agent="codex", worktree="w", mode="stream")  # type: ignore[arg-type]


def test_unknown_role_lookup_is_an_error() -> None:
    config = parse_config("window a codex master\n")
    with pytest.raises(SwarmforgeError, match="Unknown role: b"):
        config.role("b")


def test_display_names_follow_swarmforge() -> None:
    assert display_name("code-reviewer") == "Code Reviewer"
    assert display_name("QA") == "Qa"


def test_load_config_needs_the_config_and_the_constitution(tmp_path: Path) -> None:
    with pytest.raises(SwarmforgeError, match=r"Config not found at .*swarmforge\.conf"):
        load_config(str(tmp_path))
    write(tmp_path / "swarmforge" / "swarmforge.conf", "window coder codex master\n")
    with pytest.raises(SwarmforgeError, match="Constitution prompt not found at "):
        load_config(str(tmp_path))


def test_a_missing_role_prompt_names_the_line_that_declares_the_role(tmp_path: Path) -> None:
    root = swarmforge_project(tmp_path, "window a codex master\n\nwindow b codex b\n", ["a"])
    with pytest.raises(CorruptFile) as caught:
        load_config(str(root))
    expected = root / "swarmforge" / "roles" / "b.prompt"
    assert (caught.value.line, caught.value.problem) == (3, f"Missing role prompt {expected}")
    assert caught.value.path == str(root / "swarmforge" / "swarmforge.conf")
    assert caught.value.hint == ""


def test_a_prompt_in_the_older_layout_gets_a_hint(tmp_path: Path) -> None:
    root = swarmforge_project(tmp_path, "window a codex master\n", [])
    write(root / "swarmforge" / "a.prompt", "old place\n")
    with pytest.raises(CorruptFile) as caught:
        load_config(str(root))
    assert "Move " in caught.value.hint and "roles/a.prompt" in caught.value.hint


def test_exec_roles_need_no_prompt(tmp_path: Path) -> None:
    root = swarmforge_project(tmp_path, "window a codex master\nwindow t exec t pytest\n", ["a"])
    assert load_config(str(root)).names == ("a", "t")


def test_a_config_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    root = swarmforge_project(tmp_path, "", ["a"])
    (root / "swarmforge" / "swarmforge.conf").write_bytes(b"window a codex master\n\xff\n")
    with pytest.raises(CorruptFile) as caught:
        load_config(str(root))
    assert (caught.value.line, caught.value.problem) == (2, "not valid UTF-8")


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    root = swarmforge_project(tmp_path, "", ["a"])
    (root / "swarmforge" / "swarmforge.conf").write_bytes(b"\xef\xbb\xbfwindow a codex master\n")
    assert load_config(str(root)).names == ("a",)


PACKS = sorted(p.name for p in Path(shipped_packs_dir()).iterdir() if p.is_dir())


def test_the_tool_ships_the_two_four_and_six_packs() -> None:
    assert {"two-pack", "four-pack", "six-pack"} <= set(PACKS)


@pytest.mark.parametrize("pack", PACKS)
def test_each_shipped_pack_parses_and_its_prompts_exist(pack: str, tmp_path: Path) -> None:
    text = (Path(shipped_packs_dir()) / pack / "swarmforge.conf").read_text()
    config = parse_config(text, f"conf/{pack}/swarmforge.conf")
    for role in config.roles:
        assert (Path(shipped_roles_dir()) / f"{role.name}.prompt").is_file(), role.name
    # Laid out in a project as `init` lays it out, it loads like a SwarmForge project.
    target = tmp_path / "swarmforge"
    shutil.copytree(Path(shipped_packs_dir()) / pack, target)
    shutil.copy(Path(shipped_roles_dir()) / "constitution.prompt", target)
    for role in config.roles:
        write(target / "roles" / f"{role.name}.prompt", "prompt\n")
    assert load_config(str(tmp_path)).names == config.names


def test_the_six_pack_has_swarmforges_shape() -> None:
    text = (Path(shipped_packs_dir()) / "six-pack" / "swarmforge.conf").read_text()
    rows = [(r.name, r.agent, r.worktree, r.mode) for r in parse_config(text).roles]
    assert rows == [
        ("specifier", "codex", "master", "task"),
        ("coder", "codex", "coder", "task"),
        ("cleaner", "codex", "cleaner", "batch"),
        ("architect", "codex", "architect", "batch"),
        ("hardener", "codex", "hardener", "batch"),
        ("QA", "codex", "QA", "batch"),
    ]
