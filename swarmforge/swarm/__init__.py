"""The swarm layer: swarmforge.conf, agent command lines, role prompts and the constitution."""
