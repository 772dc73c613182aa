"""`swarmforge doctor`: what a swarm needs on this host and across hosts, checked one by one."""
