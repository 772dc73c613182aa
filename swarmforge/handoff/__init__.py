"""The handoff layer: the mailbox protocol on plain files, and the daemon that delivers it."""
