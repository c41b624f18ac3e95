"""The ``llmjudge`` command: compile, lint, rules, cache and the results-file verbs."""
