"""The project's JetStream stream: the one configuration every host expects of it.

One JetStream stream per project holds the mail of every role, on subjects
`swarmforge.<project>.role.<role>`:

- file storage, so mail survives a restart of the server;
- work-queue retention: each role has exactly one consumer on its own subject, and a
  message is deleted once that consumer acknowledged it, which the receiver does only
  after the file is durable in the recipient's inbox. Nothing else reads the mail
  again, so keeping it (limits retention) would only let the stream grow;
- a duplicate window of two minutes: a sender killed after its publish but before it
  moved the original to sent/ publishes again on restart with the same message id,
  and the server drops the second copy.
"""

from __future__ import annotations

from nats.js import api

from swarmforge.net.subjects import SUBJECT_ROOT, stream_name

DUPLICATE_WINDOW = 120.0  # seconds: a publish repeated within it is dropped
MSG_ID_HEADER = "Nats-Msg-Id"
# One durable consumer per role: set explicitly, since a stream that sets none (or -1)
# gets the server's default of 1,000 (see docs/scale.md).
MAX_CONSUMERS = 10_000


def stream_config(project: str) -> api.StreamConfig:
    """The configuration every host expects of the project's stream."""
    return api.StreamConfig(
        name=stream_name(project),
        subjects=[f"{SUBJECT_ROOT}.{project}.role.*"],
        retention=api.RetentionPolicy.WORK_QUEUE,
        storage=api.StorageType.FILE,
        duplicate_window=DUPLICATE_WINDOW,
        max_consumers=MAX_CONSUMERS,
    )


def config_problems(found: api.StreamConfig, project: str) -> list[str]:
    """How the stream's configuration differs from the one expected (empty if it does not)."""
    want = stream_config(project)
    problems = []
    for field in ("subjects", "retention", "storage", "duplicate_window", "max_consumers"):
        have, expected = getattr(found, field), getattr(want, field)
        if have != expected:
            problems.append(f"{field} is {have}, expected {expected}")
    return problems
