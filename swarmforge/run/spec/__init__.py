"""Run specs: the validated task tree of a planned run, its canonical form and its run id."""
