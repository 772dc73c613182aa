"""swarmforge.conf: misspelt receive modes and names that cannot be role or worktree names."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swarmforge.config.conf import load_config, parse_config
from swarmforge.config.roster import RoleSpec
from swarmforge.errors import CorruptFile
from swarmforge.rolenames import role_name_problem
from swarmforge.roletable import parse_roles
from tests.support import git, run_cli

CONF = "/p/swarmforge/swarmforge.conf"


def refusal(text: str) -> CorruptFile:
    with pytest.raises(CorruptFile) as caught:
        parse_config(text, CONF)
    assert caught.value.path == CONF
    return caught.value


def one_role(line: str) -> RoleSpec:
    return parse_config(line + "\n", CONF).roles[0]


@pytest.mark.parametrize(
    "word",
    [
        *("bacth", "btach", "batc", "bath", "batchh", "Batch", "BATCH", "xatch"),
        *("taks", "tsak", "tas", "tasks", "Task", "TASK", "tasl", "atsk"),
    ],
)
def test_a_misspelt_receive_mode_is_refused_with_its_line(word: str) -> None:
    error = refusal(f"window coder codex master\n\nwindow cleaner codex cleaner {word} -v\n")
    assert error.line == 3
    assert error.problem == (
        f"'{word}' looks like a misspelt receive mode; write task or batch "
        f'(or quote it, "{word}", if it is meant for the agent)'
    )


@pytest.mark.parametrize(
    ("tail", "argv"),
    [
        ('"bacth"', ("bacth",)),
        ("'Batch' -v", ("Batch", "-v")),
        ("\\tasks", ("tasks",)),
        ('ta"sks"', ("tasks",)),
        ("task bacth", ("bacth",)),
    ],
)
def test_a_quoted_near_mode_or_one_after_the_mode_goes_to_the_agent(
    tail: str, argv: tuple[str, ...]
) -> None:
    role = one_role(f"window cleaner codex cleaner {tail}")
    assert (role.mode, role.extra_args) == ("task", argv)


@pytest.mark.parametrize("word", ["-batch", "--task", "taskforce", "bash", "test", "batches"])
def test_options_and_words_further_from_a_mode_are_agent_arguments(word: str) -> None:
    assert one_role(f"window cleaner codex cleaner {word}").extra_args == (word,)


def test_an_exec_command_that_looks_like_a_misspelt_mode_must_follow_the_mode() -> None:
    error = refusal("window t exec t patch -p1\n")
    assert error.problem.endswith('(or quote it, "patch", if it is the command)')
    role = one_role("window t exec t task patch -p1")
    assert (role.mode, role.extra_args) == ("task", ("patch", "-p1"))


def _one_edit_from(mode: str, alphabet: str) -> set[str]:
    """Every word one insertion, deletion, substitution or neighbour swap away from `mode`."""
    splits = [(mode[:i], mode[i:]) for i in range(len(mode) + 1)]
    words = {a + b[1:] for a, b in splits if b}
    words |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    words |= {a + c + b[1:] for a, b in splits if b for c in alphabet}
    words |= {a + c + b for a, b in splits for c in alphabet}
    return words


LETTERS = "abcehkstxABCHKST"
MODES = ("task", "batch")
NEAR = {word for mode in MODES for word in _one_edit_from(mode, LETTERS.lower())}


def _recase(word: str, upper: set[int]) -> str:
    return "".join(c.upper() if i in upper else c for i, c in enumerate(word))


# Near words are rare among random ones: draw them on purpose too, in any case.
NEAR_WORDS = st.builds(_recase, st.sampled_from(sorted(NEAR)), st.sets(st.integers(0, 5)))


@given(NEAR_WORDS | st.text(LETTERS, min_size=1, max_size=7))
def test_a_fifth_word_is_refused_exactly_when_it_is_one_edit_from_a_mode(word: str) -> None:
    near = word not in MODES and word.lower() in NEAR
    try:
        role = one_role(f"window a codex w {word}")
    except CorruptFile as exc:
        assert near and "misspelt receive mode" in exc.problem
    else:
        assert not near
        assert (role.mode, role.extra_args) in ((word, ()), ("task", (word,)))


@pytest.mark.parametrize("name", ["a.b", "qa:1", "c#d", "."])
def test_a_role_name_tmux_cannot_use_as_a_session_is_refused(name: str) -> None:
    error = refusal(f"window {name} codex master\n")
    assert error.line == 1
    assert error.problem == (
        f"role name '{name}' may not contain '.', ':' or '#' "
        f"(tmux would rename its session swarmforge-{name})"
    )


SHELL_NAMES = ["$(x)", "$(touch${IFS}PWN)", "$HOME", "a`id`b", "st*r", "a?", "[ab]", "a]"]
SHELL_NAMES += ["a;b", "a|b", "a&b", "a>b", "a<b", "(a)", "{a}", "~a", "a!"]


@pytest.mark.parametrize("name", ["-x", "--help", "-"])
def test_a_role_name_an_option_parser_would_read_as_an_option_is_refused(name: str) -> None:
    error = refusal(f"window coder codex master\nwindow {name} codex w\n")
    assert str(error) == (
        f"{CONF}, line 2: role name '{name}' may not start with '-' "
        "(a command would read it as an option)"
    )
    # Letters, digits and a '-' further in still make role names.
    for fine in ("coder", "code-review", "QA", "r2d2", "a-", "x-1-y", "é"):
        assert one_role(f"window {fine} codex w").name == fine


@pytest.mark.parametrize("name", SHELL_NAMES)
def test_a_role_name_a_shell_would_expand_is_refused(name: str) -> None:
    error = refusal(f"window coder codex master\nwindow {name} codex w\n")
    assert str(error) == (
        f"{CONF}, line 2: role name '{name}' may not contain '$', '`', '*', '?', '[', ']', "
        "';', '|', '&', '<', '>', '(', ')', '{', '}', '~' or '!' (a shell would expand or act "
        "on them)"
    )
    assert role_name_problem(name) == error.problem
    with pytest.raises(CorruptFile, match="a shell would expand or act on them"):
        parse_roles(f"{name}\tb\tc\td\te\tf\ttask\n", "/p/.swarmforge/roles.tsv")


def test_role_and_worktree_names_have_at_most_64_bytes() -> None:
    assert one_role(f"window {'r' * 64} codex {'w' * 64}").name == "r" * 64
    assert one_role(f"window {'é' * 32} codex master").name == "é" * 32
    limit = "at most 64 characters (64 bytes of UTF-8)"
    error = refusal(f"window a codex master\nwindow {'r' * 300} codex w\n")
    assert error.line == 2
    assert error.problem == f"role name '{'r' * 32}...' (300 characters) is too long: {limit}"
    assert refusal(f"window {'é' * 33} codex w\n").problem.endswith(f"is too long: {limit}")
    error = refusal(f"window a codex {'w' * 65}\n")
    shown = f"'{'w' * 32}...' (65 characters)"
    assert error.problem == f"Invalid worktree {shown} for role 'a': too long, {limit}"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('window "my role" claude x', 'quoted role name "my role"'),
        ('window "my role"', 'quoted role name "my role"'),
        ("window 'qa' codex qa batch", "quoted role name 'qa'"),
        ('window "" claude x', 'quoted role name ""'),
        ('window-invisible "a b"c codex x', 'quoted role name "a b"c'),
        ('window a"b codex x', "role name 'a\"b'"),
    ],
)
def test_a_quoted_role_name_is_named_as_such(line: str, problem: str) -> None:
    error = refusal(f"{line}\n")
    assert error.problem == f"{problem}: role names cannot contain quotes or spaces"


def test_a_quoted_agent_or_worktree_is_refused() -> None:
    error = refusal('window a "" x\n')
    assert error.problem == "agent '\"\"' looks empty: agent names cannot contain quotes or spaces"
    error = refusal("window a 'codex' x\n")
    assert error.problem == "agent ''codex'': agent names cannot contain quotes or spaces"
    error = refusal('window a codex "w"\n')
    assert error.problem == (
        "Invalid worktree '\"w\"' for role 'a': worktree names cannot contain quotes or spaces"
    )


def test_roles_tsv_and_run_specs_refuse_the_same_names() -> None:
    assert role_name_problem("a b") == "role name 'a b': role names cannot contain quotes or spaces"
    with pytest.raises(CorruptFile, match=r"may not contain '\.', ':' or '#'"):
        parse_roles("a.b\tb\tc\td\te\tf\ttask\n", "/p/.swarmforge/roles.tsv")


def test_a_bad_name_is_reported_before_a_missing_prompt(tmp_path: Path) -> None:
    (tmp_path / "swarmforge").mkdir()
    (tmp_path / "swarmforge" / "constitution.prompt").write_text("Obey.\n")
    conf = tmp_path / "swarmforge" / "swarmforge.conf"
    conf.write_text('window coder codex master\nwindow "my role" claude x\n')
    with pytest.raises(CorruptFile) as caught:
        load_config(str(tmp_path))
    assert (caught.value.path, caught.value.line) == (str(conf), 2)
    assert "role names cannot contain quotes or spaces" in caught.value.problem


@pytest.fixture
def initialised(repo: Path) -> Path:
    result = run_cli("init", "--pack", "two-pack", str(repo), cwd=repo.parent)
    assert result.returncode == 0, result.stderr
    return repo


BAD_LINES = {
    "window cleaner codex cleaner bacth": "'bacth' looks like a misspelt receive mode",
    f"window {'r' * 300} codex cleaner": "is too long: at most 64 characters",
    "window a.b codex cleaner": "may not contain '.', ':' or '#'",
    'window "my role" claude x': "role names cannot contain quotes or spaces",
    "window -x codex cleaner": "role name '-x' may not start with '-'",
    "window st*r codex cleaner": "role name 'st*r' may not contain '$', '`', '*', '?'",
}


@pytest.mark.parametrize("command", ["doctor", "up"])
def test_doctor_and_up_show_the_line_at_fault_and_up_starts_nothing(
    initialised: Path, command: str
) -> None:
    conf = initialised / "swarmforge" / "swarmforge.conf"
    for line, problem in BAD_LINES.items():
        conf.write_text(f"window coder codex master\n{line}\n")
        args = ("--backend", "headless") if command == "up" else ()
        result = run_cli(command, "--project", str(initialised), *args, cwd=initialised)
        assert result.returncode == 1
        assert f"{conf}, line 2: " in result.stdout + result.stderr
        assert problem in result.stdout + result.stderr
    assert not (initialised / ".swarmforge").exists()
    assert not (initialised / ".worktrees").exists()
    assert git(initialised, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_the_reference_set_holds_the_misspellings_and_the_modes() -> None:
    assert {"bacth", "tsak", "tasks", "tas", "bath", "task", "batch"} <= NEAR
    assert not {"bash", "test", "taskforce"} & NEAR
