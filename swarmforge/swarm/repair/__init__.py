"""`repair`: put work stuck in a role's `inbox/in_process/` back in its queue.

An item stays in process until the role that took it runs `done`. When that role's
agent is gone (no swarm runs, or its process died) or has exited, nobody will, and in
task mode everything queued behind it waits too. repair returns each such item to
`inbox/new/` under its own name, so it keeps its place by priority and time, with two
headers added (`requeued_at`, and `requeue_count`, one more on every repair) and every
other byte as it was. Of a batch that a `done` left half finished, only the items
without `completed_at` go back; the finished ones are moved to `completed/` as that
`done` would have. `--older-than` also takes back work held longer than that, whoever
holds it.

Crash safety: the copy is written under a temporary name in `new/` and linked to the
item's name, which never replaces a file, and only then is the in-process file removed.
A repair killed between the two leaves both; the next one finds the copy under the
same name and only removes the original, so an item is never lost nor doubled.

The receive helpers take no lock: taking and finishing work are renames, and the one
that renames first wins. repair keeps to that: if the original was finished by its
role while the copy was being made, the copy is taken back before anyone can see a
second one, and if that is too late the item is reported, not hidden.
"""
