"""Run specs: validation before anything is journaled, fan-out, canonical form and run id."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from swarmforge.errors import CorruptFile, SwarmforgeError
from swarmforge.run.spec.fieldtypes import id_problem
from swarmforge.run.spec.file import load_spec
from swarmforge.run.spec.runspec import RunSpec, canonical_json, flatten, run_id
from swarmforge.run.spec.task import SubtaskSpec
from swarmforge.run.spec.toplevel import TaskSpec

SPEC: dict[str, Any] = {
    "goal": "ship the release",
    "maxConcurrency": 2,
    "tasks": [
        {"id": "build", "command": ["make", "build"]},
        {"id": "test", "command": ["make", "test"], "dependsOn": ["build"], "isolate": True},
        {
            "id": "review",
            "dependsOn": ["test"],
            "subtasks": [
                {"id": "docs", "role": "coder", "metadata": {"prompt": "check the docs"}},
                {"id": "notes", "command": ["./notes.sh"], "dependsOn": ["docs"]},
            ],
        },
        {"id": "deploy", "command": ["./deploy"], "dependsOn": ["review"], "tier": "T4"},
    ],
}

# The same spec as SPEC, written the way a person writes TOML.
SPEC_TOML = """\
goal = "ship the release"
maxConcurrency = 2

[[tasks]]
id = "build"
command = ["make", "build"]

[[tasks]]
id = "test"
command = ["make", "test"]
dependsOn = ["build"]
isolate = true

[[tasks]]
id = "review"
dependsOn = ["test"]

  [[tasks.subtasks]]
  id = "docs"
  role = "coder"
  metadata = { prompt = "check the docs" }

  [[tasks.subtasks]]
  id = "notes"
  command = ["./notes.sh"]
  dependsOn = ["docs"]

[[tasks]]
id = "deploy"
command = ["./deploy"]
dependsOn = ["review"]
tier = "T4"
"""


def spec_with(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(SPEC)
    data.update(changes)
    return data


def one_task(**fields: Any) -> dict[str, Any]:
    return {"goal": "g", "tasks": [{"id": "t", **fields}]}


def write_json(tmp_path: Path, data: object, name: str = "spec.json", **dump: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data, **dump))
    return str(path)


def load(tmp_path: Path, data: object) -> RunSpec:
    return load_spec(write_json(tmp_path, data))


def problem(tmp_path: Path, data: object) -> str:
    with pytest.raises(CorruptFile) as caught:
        load(tmp_path, data)
    assert caught.value.path == str(tmp_path / "spec.json")
    assert caught.value.line is None
    return caught.value.problem


def test_a_json_spec_loads_with_defaults_filled_in(tmp_path: Path) -> None:
    spec = load(tmp_path, SPEC)
    build, test, review, deploy = spec.tasks
    assert spec.ramp is None
    assert build.command == ["make", "build"]
    assert (build.tier, build.isolate, build.background, build.irreversible) == ("T1",) + (
        False,
    ) * 3
    assert test.isolate and test.dependsOn == ["build"]
    assert review.is_lead and not build.is_lead
    assert [s.id for s in review.subtasks] == ["docs", "notes"]
    assert review.subtasks[0].role == "coder"
    assert deploy.tier == "T4"


def test_json_and_toml_forms_of_one_spec_are_one_run(tmp_path: Path) -> None:
    toml = tmp_path / "spec.toml"
    toml.write_text(SPEC_TOML)
    from_toml = load_spec(str(toml))
    from_json = load(tmp_path, SPEC)
    assert from_toml == from_json
    assert run_id(from_toml) == run_id(from_json)


def test_the_extension_decides_the_format_case_insensitively(tmp_path: Path) -> None:
    assert run_id(load_spec(write_json(tmp_path, SPEC, "SPEC.JSON"))) == run_id(
        load(tmp_path, SPEC)
    )


def test_flatten_lists_leads_before_their_subtasks(tmp_path: Path) -> None:
    rows = [(depth, task.id, parent) for depth, task, parent in flatten(load(tmp_path, SPEC))]
    assert rows == [
        (1, "build", None),
        (1, "test", None),
        (1, "review", None),
        (2, "docs", "review"),
        (2, "notes", "review"),
        (1, "deploy", None),
    ]


# -- canonical form and run id ----------------------------------------------------------------


def test_run_id_is_content_addressed(tmp_path: Path) -> None:
    spec = load(tmp_path, SPEC)
    assert run_id(spec).startswith("run-") and len(run_id(spec)) == len("run-") + 16
    assert run_id(spec) == run_id(RunSpec.model_validate(copy.deepcopy(SPEC)))


def test_key_order_and_whitespace_do_not_change_the_run(tmp_path: Path) -> None:
    reordered = {key: SPEC[key] for key in reversed(list(SPEC))}
    reordered["tasks"] = [dict(reversed(list(t.items()))) for t in SPEC["tasks"]]
    plain = write_json(tmp_path, SPEC, "a.json")
    pretty = write_json(tmp_path, reordered, "b.json", indent=7, separators=(" ,", " :  "))
    assert run_id(load_spec(plain)) == run_id(load_spec(pretty))
    assert canonical_json(load_spec(plain)) == canonical_json(load_spec(pretty))


def test_spelled_out_defaults_and_dependency_order_do_not_change_the_run(tmp_path: Path) -> None:
    explicit = spec_with(ramp=None)
    first = explicit["tasks"][0]
    first.update(tier="T1", isolate=False, background=False, irreversible=False, metadata={})
    first.update(dependsOn=[], role=None, subtasks=[], fanOut=None)
    explicit["tasks"][1]["dependsOn"] = []
    explicit["tasks"].insert(0, {"id": "lint", "command": ["ruff"]})
    explicit["tasks"][2]["dependsOn"] = ["lint", "build"]
    reordered = copy.deepcopy(explicit)
    reordered["tasks"][2]["dependsOn"] = ["build", "lint"]
    assert run_id(load(tmp_path, explicit)) == run_id(load(tmp_path, reordered))
    assert load(tmp_path, explicit).tasks[2].dependsOn == ["build", "lint"]
    bare = copy.deepcopy(SPEC)
    bare["tasks"][0] = {"id": "build", "command": ["make", "build"], "tier": "T1"}
    assert run_id(load(tmp_path, bare)) == run_id(load(tmp_path, SPEC))


def _change(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(SPEC)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("goal",), "ship the release!"),
        (("maxConcurrency",), 3),
        (("ramp",), {"initial": 1, "step": 1}),
        (("tasks", 0, "command"), ["make", "build", "-j2"]),
        (("tasks", 0, "tier"), "T2"),
        (("tasks", 0, "isolate"), True),
        (("tasks", 0, "irreversible"), True),
        (("tasks", 0, "background"), True),
        (("tasks", 0, "metadata"), {"prompt": "x"}),
        (("tasks", 1, "dependsOn"), []),
        (("tasks", 2, "subtasks", 0, "role"), "cleaner"),
        (("tasks", 2, "subtasks", 1, "id"), "notes2"),
    ],
)
def test_any_semantic_change_is_another_run(
    tmp_path: Path, path: tuple[Any, ...], value: Any
) -> None:
    assert run_id(load(tmp_path, _change(path, value))) != run_id(load(tmp_path, SPEC))


def test_task_order_is_priority_so_it_is_another_run(tmp_path: Path) -> None:
    swapped = spec_with(tasks=[SPEC["tasks"][1], SPEC["tasks"][0], *SPEC["tasks"][2:]])
    assert run_id(load(tmp_path, swapped)) != run_id(load(tmp_path, SPEC))


def test_the_canonical_form_reloads_as_the_same_run(tmp_path: Path) -> None:
    spec = load(tmp_path, spec_with(tasks=[{"id": "lint", "fanOut": FAN_OUT}]))
    path = tmp_path / "canonical.json"
    path.write_text(canonical_json(spec))
    again = load_spec(str(path))
    assert again == spec
    assert canonical_json(again) == path.read_text()


def test_canonical_json_has_sorted_keys_no_whitespace_and_every_default(tmp_path: Path) -> None:
    text = canonical_json(load(tmp_path, one_task(command=["true"])))
    assert text.startswith(
        '{"goal":"g","maxConcurrency":4,"ramp":null,"tasks":[{"background":false'
    )
    assert " " not in text and '"tier":"T1"' in text


# -- fan-out ----------------------------------------------------------------------------------

FAN_OUT: dict[str, Any] = {
    "items": ["api", "web", "cli"],
    "template": {
        "id": "lint-{{item}}",
        "command": ["ruff", "check", "src/{{item}}"],
        "metadata": {"prompt": "lint {{item}}", "paths": ["{{item}}/x"], "n": 1},
        "tier": "T2",
    },
}


def test_a_fan_out_becomes_a_lead_with_one_subtask_per_item(tmp_path: Path) -> None:
    lead = load(tmp_path, one_task(fanOut=FAN_OUT)).tasks[0]
    assert lead.is_lead and lead.fanOut is None
    assert [s.id for s in lead.subtasks] == ["lint-api", "lint-web", "lint-cli"]
    web = lead.subtasks[1]
    assert web.command == ["ruff", "check", "src/web"]
    assert web.metadata == {"prompt": "lint web", "paths": ["web/x"], "n": 1}
    assert web.tier == "T2"


def test_a_fan_out_fills_roles_and_dependencies_too(tmp_path: Path) -> None:
    fan: dict[str, Any] = {
        "items": ["a", "b"],
        "template": {"id": "{{item}}2", "role": "coder-{{item}}", "dependsOn": ["{{item}}1"]},
    }
    spec = one_task(fanOut=fan)
    spec["tasks"][0]["id"] = "lead"
    with pytest.raises(CorruptFile, match="task 'a2' depends on unknown task 'a1'"):
        load(tmp_path, spec)
    fan["template"]["dependsOn"] = []
    subtasks = load(tmp_path, spec).tasks[0].subtasks
    assert [(s.id, s.role) for s in subtasks] == [("a2", "coder-a"), ("b2", "coder-b")]


def test_a_fan_out_is_the_run_of_its_expansion(tmp_path: Path) -> None:
    fanned = load(tmp_path, one_task(fanOut=FAN_OUT))
    written = one_task(subtasks=[s.model_dump() for s in fanned.tasks[0].subtasks])
    assert run_id(load(tmp_path, written)) == run_id(fanned)


def test_two_items_expanding_to_the_same_task_are_refused(tmp_path: Path) -> None:
    fan = {"items": ["a", "b", "a"], "template": {"id": "x-{{item}}", "command": ["{{item}}"]}}
    spec = {"goal": "g", "tasks": [{"id": "lint", "fanOut": fan}]}
    assert problem(tmp_path, spec) == (
        "tasks[0]: fan-out of task 'lint': items 'a' (1) and 'a' (3) expand to the same task"
    )


def test_the_same_work_under_two_ids_is_the_same_task(tmp_path: Path) -> None:
    fan = {"items": ["a", "b"], "template": {"id": "x-{{item}}", "command": ["ruff"]}}
    assert problem(tmp_path, {"goal": "g", "tasks": [{"id": "lint", "fanOut": fan}]}) == (
        "tasks[0]: fan-out of task 'lint': items 'a' (1) and 'b' (2) expand to the same task"
    )


def test_two_items_expanding_to_one_id_are_refused(tmp_path: Path) -> None:
    fan = {"items": ["a", "b"], "template": {"id": "x", "command": ["ruff", "{{item}}"]}}
    assert problem(tmp_path, {"goal": "g", "tasks": [{"id": "lint", "fanOut": fan}]}) == (
        "tasks[0]: fan-out of task 'lint': items 'a' (1) and 'b' (2) expand to the same id 'x'"
    )


def test_a_bad_expansion_names_the_item_and_the_template_field(tmp_path: Path) -> None:
    fan = {"items": ["ok", "not ok"], "template": {"id": "x-{{item}}", "command": ["{{item}}"]}}
    assert problem(tmp_path, {"goal": "g", "tasks": [{"id": "lint", "fanOut": fan}]}) == (
        "tasks[0]: fan-out of task 'lint', item 'not ok' (2): template.id: invalid task id "
        "'x-not ok': use 1 to 64 letters, digits, '-', '_' or '.', not starting with '.' or '-'"
    )


def test_a_fan_out_has_1_to_128_items(tmp_path: Path) -> None:
    template = {"id": "x-{{item}}", "command": ["echo", "{{item}}"]}
    many = [str(n) for n in range(128)]
    assert (
        len(
            load(tmp_path, one_task(fanOut={"items": many, "template": template})).tasks[0].subtasks
        )
        == 128
    )
    too_many = one_task(fanOut={"items": [*many, "128"], "template": template})
    assert problem(tmp_path, too_many).startswith(
        "tasks[0].fanOut.items: List should have at most 128"
    )
    none = one_task(fanOut={"items": [], "template": template})
    assert problem(tmp_path, none).startswith("tasks[0].fanOut.items: List should have at least 1")


# -- the depth bound --------------------------------------------------------------------------

DEPTH = (
    "subtask 's' cannot carry subtasks: the depth bound is "
    "orchestrator (0) -> lead (1) -> worker (2), and a worker is a leaf"
)


@pytest.mark.parametrize(
    "nested",
    [
        {"subtasks": [{"id": "w", "command": ["x"]}]},
        {"subtasks": []},
        {"fanOut": {"items": ["a"], "template": {"id": "w{{item}}", "command": ["x"]}}},
    ],
)
def test_subtasks_cannot_carry_subtasks(tmp_path: Path, nested: dict[str, Any]) -> None:
    spec = one_task(subtasks=[{"id": "s", "command": ["x"], **nested}])
    assert problem(tmp_path, spec) == f"tasks[0].subtasks[0]: {DEPTH}"


def test_a_fan_out_template_cannot_carry_subtasks(tmp_path: Path) -> None:
    template = {"id": "s", "subtasks": [{"id": "w", "command": ["x"]}]}
    spec = one_task(fanOut={"items": ["a"], "template": template})
    assert problem(tmp_path, spec) == (
        f"tasks[0]: fan-out of task 't', item 'a' (1): template: {DEPTH}"
    )


def test_the_models_enforce_the_depth_bound_without_a_file() -> None:
    with pytest.raises(ValueError, match="cannot carry subtasks"):
        SubtaskSpec.model_validate({"id": "s", "command": ["x"], "subtasks": []})
    assert TaskSpec.model_validate({"id": "t", "subtasks": [{"id": "s", "command": ["x"]}]}).is_lead


# -- ids and dependencies ---------------------------------------------------------------------


@pytest.mark.parametrize("task_id", ["a", "A-1", "_x", "v1.2_rc-3", "9", "x" * 64, "a.b"])
def test_good_ids(task_id: str) -> None:
    assert id_problem(task_id) is None


@pytest.mark.parametrize(
    "task_id",
    ["", ".a", "-a", "a/b", "a b", "a:b", "é", "x" * 65, "a..b", "a.", "a.lock", "a\n", "a@{1}"],
)
def test_bad_ids_are_refused_with_the_id_named(tmp_path: Path, task_id: str) -> None:
    assert id_problem(task_id) is not None
    message = problem(tmp_path, one_task(id=task_id, command=["x"]))
    assert message.startswith(f"tasks[0].id: invalid task id '{task_id}'")


def test_ids_are_unique_across_the_whole_tree(tmp_path: Path) -> None:
    spec = spec_with()
    spec["tasks"][2]["subtasks"][1]["id"] = "build"
    assert problem(tmp_path, spec) == "duplicate task id 'build': tasks[0] and tasks[2].subtasks[1]"
    spec["tasks"][2]["subtasks"][1]["id"] = "docs"
    assert problem(tmp_path, spec) == (
        "duplicate task id 'docs': tasks[2].subtasks[0] and tasks[2].subtasks[1]"
    )
    spec["tasks"][2]["subtasks"][1]["id"] = "notes"
    spec["tasks"][3]["id"] = "review"
    assert problem(tmp_path, spec) == "duplicate task id 'review': tasks[2] and tasks[3]"


def test_a_fanned_out_id_clashing_with_a_task_is_a_duplicate(tmp_path: Path) -> None:
    fan = {"items": ["build"], "template": {"id": "{{item}}", "command": ["x"]}}
    spec = spec_with(tasks=[*SPEC["tasks"], {"id": "lint", "fanOut": fan}])
    assert problem(tmp_path, spec) == "duplicate task id 'build': tasks[0] and tasks[4].subtasks[0]"


@pytest.mark.parametrize(
    ("where", "depends", "message"),
    [
        ((1,), ["nobody"], "task 'test' depends on unknown task 'nobody'"),
        ((1,), ["test"], "task 'test' depends on itself"),
        ((2, 0), ["docs"], "task 'docs' depends on itself"),
        ((2, 0), ["ghost"], "task 'docs' depends on unknown task 'ghost'"),
        (
            (1,),
            ["docs"],
            "task 'test' depends on 'docs', which is not one of the top-level tasks: "
            "dependsOn names siblings only",
        ),
        (
            (2, 0),
            ["build"],
            "task 'docs' depends on 'build', which is not one of the subtasks of task 'review': "
            "dependsOn names siblings only",
        ),
        ((1,), ["build", "build"], "tasks[1].dependsOn: 'build' is listed twice"),
    ],
)
def test_dependencies_name_known_siblings(
    tmp_path: Path, where: tuple[int, ...], depends: list[str], message: str
) -> None:
    spec = spec_with()
    task = spec["tasks"][where[0]]
    if len(where) > 1:
        task = task["subtasks"][where[1]]
    task["dependsOn"] = depends
    assert problem(tmp_path, spec) == message


def _chain(ids: list[str], back_edge: bool) -> dict[str, Any]:
    tasks = [{"id": i, "command": ["x"], "dependsOn": [p]} for p, i in itertools.pairwise(ids)]
    tasks.insert(0, {"id": ids[0], "command": ["x"], "dependsOn": [ids[-1]] if back_edge else []})
    return {"goal": "g", "tasks": tasks}


def test_a_two_task_cycle_is_named(tmp_path: Path) -> None:
    assert problem(tmp_path, _chain(["a", "b"], back_edge=True)) == "dependency cycle: a -> b -> a"


def test_a_longer_cycle_is_named_in_dependency_order(tmp_path: Path) -> None:
    assert problem(tmp_path, _chain(["a", "b", "c"], back_edge=True)) == (
        "dependency cycle: a -> c -> b -> a"
    )


def test_a_cycle_among_subtasks_is_named(tmp_path: Path) -> None:
    spec = spec_with()
    spec["tasks"][2]["subtasks"][0]["dependsOn"] = ["notes"]
    assert problem(tmp_path, spec) == "dependency cycle: docs -> notes -> docs"


def test_long_chains_are_checked_without_recursion(tmp_path: Path) -> None:
    ids = [f"t{n}" for n in range(5000)]
    assert len(load(tmp_path, _chain(ids, back_edge=False)).tasks) == 5000
    assert problem(tmp_path, _chain(ids, back_edge=True)).startswith(
        "dependency cycle: t0 -> t4999"
    )


# -- the shape of a task ----------------------------------------------------------------------

NEEDS_ONE = "tasks[0]: task 't' needs exactly one of command or role"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, NEEDS_ONE),
        ({"command": ["x"], "role": "coder"}, NEEDS_ONE),
        (
            {"command": "make test"},
            'tasks[0].command: a command is an argv list such as ["make", "test"], '
            "not a shell string",
        ),
        (
            {"command": []},
            "tasks[0].command: a command needs a program: its first element is missing or empty",
        ),
        (
            {"command": [""]},
            "tasks[0].command: a command needs a program: its first element is missing or empty",
        ),
        ({"command": ["x", "a\0b"]}, "tasks[0].command: a command argument cannot contain NUL"),
        ({"command": ["x", 1]}, "tasks[0].command[1]: Input should be a valid string"),
        (
            {"role": "my_role"},
            "tasks[0].role: role name 'my_role' may not contain '_', '/', whitespace or "
            "control characters",
        ),
        ({"role": "coder", "background": True}, "tasks[0]: background task 't' needs a command"),
        (
            {"command": ["x"], "background": True, "isolate": True},
            "tasks[0]: background task 't' cannot be isolated",
        ),
        (
            {"command": ["x"], "tier": "T5"},
            "tasks[0].tier: Input should be 'T1', 'T2', 'T3' or 'T4'",
        ),
        ({"command": ["x"], "isolate": "yes"}, "tasks[0].isolate: Input should be a valid boolean"),
        ({"command": ["x"], "isolate": 1}, "tasks[0].isolate: Input should be a valid boolean"),
        ({"command": ["x"], "colour": "red"}, "tasks[0].colour: unknown field"),
        (
            {"command": ["x"], "metadata": []},
            "tasks[0].metadata: Input should be a valid dictionary",
        ),
        (
            {"command": ["x"], "metadata": {"legal": "true"}},
            "tasks[0].metadata: 'legal' must be true or false, not 'true'",
        ),
        (
            {"command": ["x"], "metadata": {"security": 1}},
            "tasks[0].metadata: 'security' must be true or false, not 1",
        ),
        (
            {"command": ["x"], "subtasks": [{"id": "s", "command": ["y"]}]},
            "tasks[0]: task 't' is a lead (it has subtasks): it cannot have a command or a role",
        ),
        (
            {"role": "coder", "subtasks": [{"id": "s", "command": ["y"]}]},
            "tasks[0]: task 't' is a lead (it has subtasks): it cannot have a command or a role",
        ),
        (
            {
                "subtasks": [{"id": "s", "command": ["y"]}],
                "fanOut": {"items": ["a"], "template": {"id": "f{{item}}", "command": ["y"]}},
            },
            "tasks[0]: task 't' has both subtasks and fanOut: use one",
        ),
        (
            {"fanOut": {"items": ["a"], "template": {"id": "f{{item}}"}}},
            "tasks[0]: fan-out of task 't', item 'a' (1): template: "
            "task 'fa' needs exactly one of command or role",
        ),
        ({"fanOut": {"items": ["a"]}}, "tasks[0].fanOut.template: Field required"),
    ],
)
def test_task_shape_errors_name_their_place(
    tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    assert problem(tmp_path, one_task(**fields)) == message


def test_a_background_command_task_is_fine(tmp_path: Path) -> None:
    task = load(tmp_path, one_task(command=["server"], background=True)).tasks[0]
    assert task.background and not task.isolate


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"goal": "  "}, "goal: a run needs a goal"),
        ({"goal": 7}, "goal: Input should be a valid string"),
        ({"tasks": []}, "tasks: List should have at least 1 item after validation, not 0"),
        ({"maxConcurrency": 0}, "maxConcurrency: Input should be greater than or equal to 1"),
        ({"maxConcurrency": 257}, "maxConcurrency: Input should be less than or equal to 256"),
        ({"maxConcurrency": "4"}, "maxConcurrency: Input should be a valid integer"),
        ({"maxConcurrency": True}, "maxConcurrency: Input should be a valid integer"),
        (
            {"ramp": {"initial": 0, "step": 1}},
            "ramp.initial: Input should be greater than or equal to 1",
        ),
        (
            {"ramp": {"initial": 1, "step": 0}},
            "ramp.step: Input should be greater than or equal to 1",
        ),
        ({"ramp": {"initial": 1}}, "ramp.step: Field required"),
        ({"ramp": {"initial": 1, "step": 1, "max": 3}}, "ramp.max: unknown field"),
        ({"ramp": {"initial": 3, "step": 1}}, "ramp.initial (3) exceeds maxConcurrency (2)"),
        ({"workers": 3}, "workers: unknown field"),
    ],
)
def test_run_level_errors_name_their_place(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    assert problem(tmp_path, spec_with(**changes)) == message


def test_a_ramp_up_to_max_concurrency_is_fine(tmp_path: Path) -> None:
    spec = load(tmp_path, spec_with(ramp={"initial": 2, "step": 5}))
    assert spec.ramp is not None and (spec.ramp.initial, spec.ramp.step) == (2, 5)


def test_a_missing_goal_and_more_problems_are_all_listed(tmp_path: Path) -> None:
    with pytest.raises(CorruptFile) as caught:
        load(tmp_path, {"tasks": [{"id": "t", "command": ["x"], "tier": "T9", "isolate": "no"}]})
    assert caught.value.problem == "goal: Field required"
    assert caught.value.details == (
        "tasks[0].isolate: Input should be a valid boolean",
        "tasks[0].tier: Input should be 'T1', 'T2', 'T3' or 'T4'",
    )
    assert caught.value.message == f"{tmp_path / 'spec.json'}: goal: Field required"


# -- files ------------------------------------------------------------------------------------


def file_error(tmp_path: Path, name: str, content: bytes) -> CorruptFile:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CorruptFile) as caught:
        load_spec(str(path))
    assert caught.value.path == str(path)
    return caught.value


def test_json_syntax_errors_name_the_line(tmp_path: Path) -> None:
    error = file_error(tmp_path, "s.json", b'{\n  "goal": "g",\n  "tasks": [,]\n}\n')
    assert (error.line, error.problem) == (3, "invalid JSON: Expecting value")


def test_toml_syntax_errors_name_the_line(tmp_path: Path) -> None:
    error = file_error(tmp_path, "s.toml", b'goal = "g"\n\n[[tasks]\nid = "a"\n')
    assert error.line == 3
    assert error.problem == "invalid TOML: Expected ']]' at the end of an array declaration"


def test_a_toml_error_at_the_end_names_the_last_line(tmp_path: Path) -> None:
    error = file_error(tmp_path, "s.toml", b'goal = "g"\ngoal = "h"\n')
    assert (error.line, error.problem) == (2, "invalid TOML: Cannot overwrite a value")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"goal": "g", "goal": "h", "tasks": []}', "invalid JSON: duplicate key 'goal'"),
        (b'{"goal": "g", "tasks": [], "x": NaN}', "invalid JSON: NaN is not a JSON value"),
        (b'["goal", "tasks"]', "a run spec is an object with a goal and tasks"),
        (b"[" * 100_000, "invalid JSON: nested too deeply"),
    ],
)
def test_json_that_parses_but_is_not_a_spec_is_refused(
    tmp_path: Path, content: bytes, message: str
) -> None:
    error = file_error(tmp_path, "s.json", content)
    assert (error.line, error.problem) == (None, message)


def test_toml_dates_and_infinities_have_no_canonical_form(tmp_path: Path) -> None:
    head = b'goal = "g"\n[[tasks]]\nid = "a"\ncommand = ["x"]\n'
    when = file_error(tmp_path, "a.toml", head + b"metadata = { when = 2024-01-01 }\n")
    assert when.problem.startswith("tasks[0].metadata: not a JSON value:")
    inf = file_error(tmp_path, "b.toml", head + b"metadata = { n = inf }\n")
    assert inf.problem.startswith("tasks[0].metadata: not a JSON value:")


def test_invalid_utf8_names_its_line(tmp_path: Path) -> None:
    error = file_error(tmp_path, "s.json", b'{\n"goal": "\xff"}')
    assert (error.line, error.problem) == (2, "not valid UTF-8")


def test_a_byte_order_mark_is_not_part_of_the_document(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(SPEC).encode())
    assert run_id(load_spec(str(path))) == run_id(load(tmp_path, SPEC))


def test_other_extensions_are_refused(tmp_path: Path) -> None:
    error = file_error(tmp_path, "spec.yaml", b"goal: g\n")
    assert (error.line, error.problem) == (None, "a run spec is a .json or a .toml file")


def test_a_missing_spec_is_named(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.json")
    with pytest.raises(SwarmforgeError) as caught:
        load_spec(missing)
    assert not isinstance(caught.value, CorruptFile)
    assert caught.value.message == f"Run spec not found at {missing}"


def test_an_unreadable_spec_is_named(tmp_path: Path) -> None:
    directory = tmp_path / "dir.json"
    directory.mkdir()
    with pytest.raises(SwarmforgeError) as caught:
        load_spec(str(directory))
    assert caught.value.message.startswith(f"Cannot read run spec {directory}: ")
