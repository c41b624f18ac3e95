"""The judging service and its paths from a case to an outcome: the single-request, pairwise and
task pipelines, the task step and the pre-run estimate."""
