"""What swarmforge knows of each agent CLI: command lines, configuration, hooks, state, tokens."""
