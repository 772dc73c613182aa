"""The handoff layer: the mailbox protocol, pure files and the standard library only."""
