"""A worker's result taken in here: the task's report written as a local task's would be."""

from __future__ import annotations

from swarmforge.run.levels import Flight
from swarmforge.run.outcome import Outcome
from swarmforge.run.remote.messages import TaskResult
from swarmforge.run.report.publish import write_report


def write_outcome(reports: str, flight: Flight, result: TaskResult) -> Outcome:
    """The outcome `result` reports for `flight`'s task, its report written like a local one."""
    command = flight.level.tasks[flight.task_id].command
    data: dict[str, object] = {"command": command, "cwd": result.cwd}
    data |= {"exitCode": result.exitCode, "attempt": result.attempt}
    data |= {"worker": result.worker, "host": result.host}
    extra = {"branch": result.branch, "rescued": result.rescued, "error": result.error}
    data |= {key: value for key, value in extra.items() if value is not None}
    out, err = result.output()
    if result.error:
        err += f"{result.error}\n".encode()
    path = write_report(reports, flight.task_id, data, result.ok, out, err, durable=False)
    return Outcome(flight.task_id, result.ok, result.exitCode, path)
