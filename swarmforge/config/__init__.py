"""What the user writes and what a session records: swarmforge.conf, swarmforge.toml, prompts."""
