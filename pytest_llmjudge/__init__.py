"""pytest-llmjudge: LLM-as-a-judge regression tests for pytest."""

__version__ = "0.1.0"
