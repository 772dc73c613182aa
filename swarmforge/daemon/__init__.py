"""The delivery daemon: one delivery pass, wake-ups, mail across hosts, budgets and alerts."""
