"""The handoff protocol on plain files: messages, drafts, mailboxes, the gate, the
receive helpers, and one delivery of an outbox file. The daemon that runs deliveries
is daemon/."""
