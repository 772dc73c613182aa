"""codex: its command lines, hooks, config.toml and session rollouts."""
