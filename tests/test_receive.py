"""The receive helpers: ready_for_next / done_with_current in task and batch mode."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from swarmforge.errors import SwarmforgeError
from swarmforge.handoff import message
from swarmforge.handoff.done import done_task
from swarmforge.handoff.mailbox import Box
from swarmforge.handoff.ready import ready_task
from tests.support import SWARMFORGE, VENV_BIN, Project, run_script, script_env


def note(
    project: Project,
    role: str,
    name: str,
    priority: str = "50",
    sender: str = "coder",
    body: str = "Re-read your role and constitution.\n\nwork\n",
) -> Path:
    return project.enqueue(
        role,
        name,
        {
            "id": name[:-8],
            "from": sender,
            "to": role,
            "priority": priority,
            "type": "note",
            "message": "work",
            "recipient": role,
        },
        body,
    )


def call(project: Project, role: str, script: str) -> tuple[int, str, str]:
    r = run_script(script, project.tree(role), role)
    return r.returncode, r.stdout, r.stderr


def task_text(path: Path, priority: str = "50", sender: str = "coder", name: str = "") -> str:
    h = message.read(str(path))
    lines = [f"TASK: {path}", f"FROM: {sender}", f"TYPE: {h.get('type')}", f"PRIORITY: {priority}"]
    if name:
        lines.append(f"TASK_NAME: {name}")
    return "\n".join([*lines, "PAYLOAD:", h.body])


def test_task_mode_accepts_resumes_and_completes_in_order(project: Project) -> None:
    note(project, "cleaner", "50_20260101T000000Z_000001_from_coder_to_cleaner.handoff")
    note(project, "cleaner", "10_20260101T000005Z_000002_from_coder_to_cleaner.handoff", "10")
    in_process = project.box("cleaner", Box.IN_PROCESS)
    first = in_process / "10_20260101T000005Z_000002_from_coder_to_cleaner.handoff"
    second = in_process / "50_20260101T000000Z_000001_from_coder_to_cleaner.handoff"

    code, out, err = call(project, "cleaner", "ready_for_next.sh")
    assert (code, err) == (0, "")
    assert out == task_text(first, "10")
    stamped = message.read(str(first)).get("dequeued_at")
    assert stamped and stamped.endswith("Z")
    assert project.names("cleaner", Box.NEW) == [second.name]

    assert call(project, "cleaner", "ready_for_next.sh") == (0, out, ""), "a resume takes nothing"
    assert message.read(str(first)).get("dequeued_at") == stamped

    code, out, err = call(project, "cleaner", "done_with_current.sh")
    done = project.box("cleaner", Box.COMPLETED) / first.name
    assert (code, err) == (0, "")
    assert out == f"COMPLETED: {done}\n" + task_text(second)
    assert message.read(str(done)).get("completed_at")

    code, out, _ = call(project, "cleaner", "done_with_current_task.sh")
    assert (code, out) == (
        0,
        f"COMPLETED: {project.box('cleaner', Box.COMPLETED) / second.name}\nNO_TASK\n",
    )
    assert call(project, "cleaner", "done_with_current.sh") == (1, "", "NO_CURRENT_TASK\n")
    assert call(project, "cleaner", "ready_for_next_task.sh") == (0, "NO_TASK\n", "")


def test_task_printout_defaults_and_task_name(project: Project) -> None:
    project.enqueue("cleaner", "a.handoff", {"task": "t-9"}, "body without newline")
    code, out, _ = call(project, "cleaner", "ready_for_next.sh")
    path = project.box("cleaner", Box.IN_PROCESS) / "a.handoff"
    assert code == 0
    assert out == (
        f"TASK: {path}\nFROM: unknown\nTYPE: unknown\nPRIORITY: 50\nTASK_NAME: t-9\n"
        "PAYLOAD:\nbody without newline\n"
    )


def test_only_regular_handoff_files_are_items(project: Project) -> None:
    new = project.box("cleaner", Box.NEW)
    new.mkdir(parents=True)
    (new / "notes.txt").write_text("x")
    (new / ".partial.handoff").write_text("x")
    (new / "dir.handoff").mkdir()
    (new / "link.handoff").symlink_to(new / "notes.txt")
    assert call(project, "cleaner", "ready_for_next.sh") == (0, "NO_TASK\n", "")


def test_task_refusals(project: Project) -> None:
    in_process = project.box("cleaner", Box.IN_PROCESS)
    batch = in_process / "batch_20260101T000000Z_000001"
    batch.mkdir(parents=True)
    code, out, err = call(project, "cleaner", "ready_for_next_task.sh")
    assert (code, out) == (2, "")
    assert err == (
        f"TASK_IN_PROCESS_IS_BATCH: use ready_for_next.sh or done_with_current.sh.\n- {batch}\n"
    )
    code, _, err = call(project, "cleaner", "done_with_current_task.sh")
    assert (code, err) == (2, f"CURRENT_WORK_IS_BATCH: use done_with_current.sh.\n- {batch}\n")
    batch.rmdir()

    for n in (1, 2):
        (in_process / f"{n}.handoff").write_text("from: qa\n\nx\n")
    code, _, err = call(project, "cleaner", "ready_for_next.sh")
    assert code == 2
    assert err == (
        "AMBIGUOUS_TASK_STATE: multiple tasks are already in process.\n"
        f"- {in_process / '1.handoff'}\n- {in_process / '2.handoff'}\n"
    )
    code, _, err = call(project, "cleaner", "done_with_current.sh")
    assert code == 2 and err.startswith("AMBIGUOUS_TASK_STATE: multiple tasks are in process.\n")


def test_existing_targets_are_refused_not_overwritten(project: Project) -> None:
    queued = note(project, "cleaner", "50_a.handoff")
    blocker = project.box("cleaner", Box.IN_PROCESS) / "50_a.handoff"
    blocker.mkdir(parents=True)
    code, _, err = call(project, "cleaner", "ready_for_next.sh")
    assert (code, err) == (
        2,
        f"AMBIGUOUS_TASK_STATE: target in-process file already exists: {blocker}\n",
    )
    assert queued.exists()
    blocker.rmdir()

    assert call(project, "cleaner", "ready_for_next.sh")[0] == 0
    done = project.box("cleaner", Box.COMPLETED) / "50_a.handoff"
    done.write_text("an older file of the same name\n")
    code, _, err = call(project, "cleaner", "done_with_current.sh")
    assert (code, err) == (2, f"AMBIGUOUS_TASK_STATE: completed file already exists: {done}\n")
    assert blocker.is_file() and done.read_text() == "an older file of the same name\n"


def test_batch_mode_groups_the_top_priority(project: Project) -> None:
    a = note(project, "qa", "20_20260101T000001Z_000001_from_coder_to_qa.handoff", "20")
    b = note(
        project,
        "qa",
        "20_20260101T000002Z_000001_from_cleaner_to_qa.handoff",
        "20",
        sender="cleaner",
    )
    c = note(project, "qa", "50_20260101T000000Z_000002_from_coder_to_qa.handoff")
    code, out, err = call(project, "qa", "ready_for_next.sh")
    assert (code, err) == (0, "")
    batches = list(project.box("qa", Box.IN_PROCESS).iterdir())
    assert len(batches) == 1 and batches[0].name.startswith("batch_")
    batch = batches[0]
    assert sorted(p.name for p in batch.iterdir()) == [a.name, b.name]
    assert out == (
        f"BATCH: {batch}\nCOUNT: 2\nPRIORITY: 20\n"
        f"\nBATCH_ITEM: 1\n{task_text(batch / a.name, '20')}"
        f"\nBATCH_ITEM: 2\n{task_text(batch / b.name, '20', 'cleaner')}"
    )
    assert all(message.read(str(p)).get("dequeued_at") for p in batch.iterdir())
    assert project.names("qa", Box.NEW) == [c.name]
    assert call(project, "qa", "ready_for_next_batch.sh") == (0, out, "")

    code, out, err = call(project, "qa", "done_with_current.sh")
    done = project.box("qa", Box.COMPLETED) / batch.name
    assert (code, err) == (0, "")
    next_batch = next(project.box("qa", Box.IN_PROCESS).iterdir())
    assert out == (
        f"COMPLETED: {done / a.name}\nCOMPLETED: {done / b.name}\n"
        f"COMPLETED_BATCH: {done}\n"
        f"BATCH: {next_batch}\nCOUNT: 1\nPRIORITY: 50\n"
        f"\nBATCH_ITEM: 1\n{task_text(next_batch / c.name)}"
    )
    assert all(message.read(str(p)).get("completed_at") for p in done.iterdir())
    assert next_batch != batch and sorted(p.name for p in done.iterdir()) == [a.name, b.name]

    code, out, _ = call(project, "qa", "done_with_current_batch.sh")
    assert code == 0 and out.endswith("NO_TASK\n")
    assert call(project, "qa", "done_with_current.sh") == (1, "", "NO_CURRENT_BATCH\n")
    assert call(project, "qa", "ready_for_next.sh") == (0, "NO_TASK\n", "")


def test_batch_refusals(project: Project) -> None:
    in_process = project.box("qa", Box.IN_PROCESS)
    in_process.mkdir(parents=True)
    single = in_process / "x.handoff"
    single.write_text("from: coder\n\nx\n")
    code, _, err = call(project, "qa", "ready_for_next.sh")
    assert (code, err) == (
        2,
        f"TASK_IN_PROCESS_IS_SINGLE: use ready_for_next.sh or done_with_current.sh.\n- {single}\n",
    )
    code, _, err = call(project, "qa", "done_with_current.sh")
    assert (code, err) == (
        2,
        f"CURRENT_WORK_IS_SINGLE_TASK: use done_with_current.sh.\n- {single}\n",
    )
    single.unlink()

    empty = in_process / "batch_1"
    empty.mkdir()
    code, _, err = call(project, "qa", "ready_for_next.sh")
    assert (code, err) == (2, f"AMBIGUOUS_TASK_STATE: batch contains no tasks: {empty}\n")
    code, _, err = call(project, "qa", "done_with_current.sh")
    assert (code, err) == (2, f"AMBIGUOUS_TASK_STATE: batch contains no tasks: {empty}\n")
    (empty / "y.handoff").write_text("from: coder\n\ny\n")
    (in_process / "batch_2").mkdir()
    code, _, err = call(project, "qa", "ready_for_next.sh")
    assert code == 2
    assert err.startswith("AMBIGUOUS_TASK_STATE: multiple batches are already in process.\n")
    code, _, err = call(project, "qa", "done_with_current.sh")
    assert code == 2 and err.startswith("AMBIGUOUS_TASK_STATE: multiple batches are in process.")
    (in_process / "batch_2").rmdir()

    clash = project.box("qa", Box.COMPLETED) / "batch_1"
    clash.mkdir(parents=True)
    code, _, err = call(project, "qa", "done_with_current.sh")
    assert (code, err) == (2, f"AMBIGUOUS_TASK_STATE: completed batch already exists: {clash}\n")
    assert (empty / "y.handoff").exists()


def test_receive_mode_comes_from_roles_tsv(project: Project) -> None:
    roles = project.root / ".swarmforge" / "roles.tsv"
    rows = roles.read_text().splitlines()
    rows[1] = rows[1].rsplit("\t", 1)[0] + "\tweekly"
    rows[0] = rows[0].rsplit("\t", 1)[0]  # a missing seventh column means task
    roles.write_text("\n".join(rows) + "\n")
    assert call(project, "cleaner", "ready_for_next.sh") == (
        2,
        "",
        "INVALID_RECEIVE_MODE: weekly for role cleaner\n",
    )
    assert call(project, "cleaner", "done_with_current.sh")[0] == 2
    assert call(project, "coder", "ready_for_next.sh") == (0, "NO_TASK\n", "")
    assert call(project, "cleaner", "ready_for_next_task.sh") == (0, "NO_TASK\n", "")


def test_role_errors(project: Project) -> None:
    for script in ("ready_for_next.sh", "done_with_current.sh"):
        r = run_script(script, project.tree("coder"), None)
        assert (r.returncode, r.stderr) == (1, "Set SWARMFORGE_ROLE.\n")
        r = run_script(script, project.tree("coder"), "ops")
        assert (r.returncode, r.stderr) == (1, "Unknown role: ops\n")


def test_no_project_root(tmp_path: Path) -> None:
    r = run_script("ready_for_next.sh", tmp_path, "coder")
    assert (r.returncode, r.stderr) == (1, "Cannot find SwarmForge project root\n")


def test_a_corrupt_roles_tsv_names_the_line(project: Project) -> None:
    roles = (project.root / ".swarmforge" / "roles.tsv").resolve()  # where the state lies
    roles.write_text(roles.read_text() + "broken line\n")
    r = run_script("ready_for_next.sh", project.tree("coder"), "coder")
    assert (r.returncode, r.stderr) == (
        1,
        f"{roles}, line 4: expected 7 tab-separated columns, got 1\n",
    )


def test_a_corrupt_queued_file_is_set_aside_with_its_reason(project: Project) -> None:
    bad = project.box("cleaner", Box.NEW) / "40_bad.handoff"
    bad.parent.mkdir(parents=True)
    data = b"from: coder\nno colon here\n\nbody\n"
    bad.write_bytes(data)
    note(project, "cleaner", "50_good.handoff")
    code, out, err = call(project, "cleaner", "ready_for_next.sh")
    aside = project.box("cleaner", Box.FAILED) / bad.name
    reason = f"{bad}, line 2: expected 'field: value'"
    assert err == f"SET_ASIDE: {aside}: {reason}\n"
    assert code == 0 and out.startswith(f"TASK: {project.box('cleaner', Box.IN_PROCESS)}/50_good")
    assert aside.read_bytes() == data, "kept byte for byte"
    assert Path(f"{aside}.error").read_text() == reason + "\n"
    assert project.names("cleaner", Box.NEW) == []


def test_a_batch_sets_corrupt_queued_files_aside(repo: Path) -> None:
    project = Project(repo, {"coder": "task", "qa": "batch"})
    note(project, "qa", "50_a.handoff")
    bad = project.box("qa", Box.NEW) / "50_b.handoff"
    bad.write_bytes(b"\xff\n\nbody\n")
    note(project, "qa", "50_c.handoff")
    r = run_script("ready_for_next.sh", project.tree("qa"), "qa", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    aside = str(project.box("qa", Box.FAILED) / bad.name)
    assert report["set_aside"] == [{"path": aside, "reason": f"{bad}, line 1: not valid UTF-8"}]
    assert [Path(t["path"]).name for t in report["next"]["items"]] == [
        "50_a.handoff",
        "50_c.handoff",
    ]


def test_a_crash_between_claim_and_stamp_is_repaired_on_resume(project: Project) -> None:
    path = project.box("cleaner", Box.IN_PROCESS) / "50_a.handoff"
    path.parent.mkdir(parents=True)
    path.write_text("from: coder\npriority: 50\n\nwork\n")
    code, out, _ = call(project, "cleaner", "ready_for_next.sh")
    assert code == 0 and out.startswith(f"TASK: {path}\n")
    assert message.read(str(path)).get("dequeued_at")


def test_main_checkout_role_and_json(repo: Path) -> None:
    project = Project(repo, {"lead": "master", "qa": "batch"})
    note(project, "lead", "50_a.handoff", sender="qa")
    r = run_script("ready_for_next.sh", project.root, "lead")
    assert r.stdout.startswith(f"TASK: {project.box('lead', Box.IN_PROCESS) / '50_a.handoff'}")
    sub = project.root / "src" / "deep"
    sub.mkdir(parents=True)
    # The mailbox is the current directory's; the project is still found from below.
    r = run_script("ready_for_next.sh", sub, "lead")
    assert (r.returncode, r.stdout) == (0, "NO_TASK\n")
    out = subprocess.run(
        [SWARMFORGE, "done", "--json"],
        cwd=project.root,
        env=script_env("lead"),
        capture_output=True,
        text=True,
    )
    report = json.loads(out.stdout)
    assert report["mode"] == "task" and report["next"] is None
    assert report["completed"] == [str(project.box("lead", Box.COMPLETED) / "50_a.handoff")]


def test_api_refusals_carry_exit_codes(project: Project) -> None:
    box = project.mailbox("cleaner")
    assert ready_task(box) is None
    with pytest.raises(SwarmforgeError) as info:
        done_task(box)
    assert (info.value.exit_code, info.value.message) == (1, "NO_CURRENT_TASK")
    note(project, "cleaner", "50_a.handoff")
    task = ready_task(box)
    assert task is not None and task.handoff.get("dequeued_at")
    assert done_task(box) == [str(project.box("cleaner", Box.COMPLETED) / "50_a.handoff")]


def test_an_empty_batch_left_by_a_killed_ready_is_cleared_not_a_wedge(project: Project) -> None:
    in_process = project.box("qa", Box.IN_PROCESS)
    left = in_process / "batch_20260101T000000Z_000001"
    left.mkdir(parents=True)
    old = time.time() - 60
    os.utime(left, (old, old))  # a ready killed a minute ago, between mkdir and its moves
    queued = note(project, "qa", "20_20260101T000001Z_000001_from_coder_to_qa.handoff", "20")
    code, out, err = call(project, "qa", "ready_for_next.sh")
    assert (code, err) == (0, "") and "COUNT: 1" in out
    assert not left.exists() and not queued.exists()
    code, _, err = call(project, "qa", "done_with_current.sh")
    assert code == 0, err
    # A batch directory another ready made a moment ago is left alone.
    fresh = in_process / "batch_20260101T000000Z_000002"
    fresh.mkdir()
    code, _, err = call(project, "qa", "ready_for_next.sh")
    assert (code, err) == (2, f"AMBIGUOUS_TASK_STATE: batch contains no tasks: {fresh}\n")


def test_a_roles_tsv_that_is_a_fifo_is_refused_without_waiting(project: Project) -> None:
    roles = (project.root / ".swarmforge" / "roles.tsv").resolve()  # where the state lies
    roles.unlink()
    os.mkfifo(roles)
    r = run_script("ready_for_next.sh", project.tree("coder"), "coder")
    assert (r.returncode, r.stderr) == (1, "Cannot find SwarmForge project root\n")
    # The daemon reads the table of the project it is given, without looking for it.
    daemon = subprocess.run(
        [f"{VENV_BIN}/swarmforge", "daemon", "run", "--once", "--project", str(project.root)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (daemon.returncode, daemon.stderr) == (0, "")
    log = (project.root / ".swarmforge" / "daemon" / "handoffd.log").read_text()
    assert f"keeping the previous role table: {roles}: not a regular file (a FIFO)\n" in log
