"""`status`: what each role of the session is doing, here and on the swarm's other hosts."""
