"""From a benchmark and a case to the exact judge request: rubric templates, fencing, digest,
snapshot rendering."""
