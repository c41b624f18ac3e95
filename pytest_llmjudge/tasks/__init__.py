"""Tasks: what produces a case's candidate output (prompt templates, few-shot examples)."""
