"""The names of planned-run tasks in JetStream: the task stream, the results bucket, the
subjects of a label set, message ids and result keys.

A task goes to `swarmforge.<project>.task.<labels>.<runId>.<taskId>`, where `<labels>`
spells the set of labels the task requires (`_` for none).
"""

from __future__ import annotations

from swarmforge.net.subjects import SUBJECT_ROOT, token

NO_LABELS = "_"


def labels_token(labels: list[str] | frozenset[str]) -> str:
    """The subject token of a label set: its labels sorted and joined by `_` (which no
    label holds), or `_` for none."""
    return "_".join(sorted(labels)) or NO_LABELS


def labels_of(found: str) -> frozenset[str]:
    """The label set a token spells (`labels_token` reversed)."""
    return frozenset() if found == NO_LABELS else frozenset(found.split("_"))


def stream_name(project: str) -> str:
    """The project's task stream."""
    return f"SWARMFORGE-{project}-TASKS"


def bucket_name(project: str) -> str:
    """The project's results bucket."""
    return f"swarmforge-{project}-results"


def task_subject(project: str, labels: list[str], run_id: str, task_id: str) -> str:
    """Where one task of a run waits for a worker with `labels`."""
    return f"{task_prefix(project, labels)}.{run_id}.{token(task_id)}"


def task_prefix(project: str, labels: list[str] | frozenset[str]) -> str:
    """The subject every task for workers with `labels` begins with."""
    return f"{SUBJECT_ROOT}.{project}.task.{labels_token(labels)}"


def message_id(run_id: str, task_id: str, attempt: int) -> str:
    """The id under which the server drops an attempt published twice."""
    return f"{run_id}:{task_id}:{attempt}"


def result_key(run_id: str, task_id: str, attempt: int) -> str:
    """The key of an attempt's result in the results bucket."""
    return f"{run_id}.{token(task_id)}.{attempt}"
