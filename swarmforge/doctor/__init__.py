"""`swarmforge doctor`: what a swarm needs on this host and across hosts, checked one by one.

Every check is a plain function returning a `Check`; none prints, none raises for a
problem it finds (a problem is a `warn` or `FAIL` result with a fix). report.py runs
them all, in order.
"""
