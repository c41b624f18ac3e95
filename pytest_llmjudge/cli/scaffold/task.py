"""The system under test: pytest-llmjudge calls ``run`` for each case of benchmarks/CAPITALS.yaml
that has no ``candidate_output``, and the judge grades what it returns.

Replace the body with a call to your product (a model, an HTTP API, a function). Outputs are
cached by the benchmark's ``task_version``: bump it when this code changes.
"""

from pytest_llmjudge.tasks.task_input import TaskInput

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi"}


def run(case: TaskInput) -> str:
    """One case in (``case.inputs``, ``case.source_narrative``, ``case.metadata``), its output out:
    a string, a mapping or a pydantic model."""
    country = str(case.inputs["country"])
    capital = CAPITALS.get(country)
    if capital is None:
        return f"I do not know the capital of {country}."
    return f"The capital of {country} is {capital}."
