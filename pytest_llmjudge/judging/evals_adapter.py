"""Every private name of pydantic-evals the plugin uses, in one place.

pydantic-evals is pinned (pyproject), and ``tests/test_evals_adapter.py`` checks each name below
still exists with the shape used here, so an upgrade that moves one fails there, by name, not in
the middle of a run. Imported lazily: pydantic-evals takes 0.2 s to import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def build_prompt(inputs: Any, output: Any, expected_output: Any, rubric: str) -> str | Sequence[Any]:
    """LLMJudge's own user prompt (``<Input>``, ``<Output>``, ``<ExpectedOutput>``, ``<Rubric>``)."""
    from pydantic_evals.evaluators.llm_as_a_judge import _build_prompt

    prompt, _ = _build_prompt(inputs=inputs, output=output, expected_output=expected_output, rubric=rubric)
    return prompt


def judge_agent() -> Any:
    """The agent ``LLMJudge(include_input=True, include_expected_output=True)`` runs (a case without
    ground truth simply has no ``<ExpectedOutput>`` section)."""
    from pydantic_evals.evaluators.llm_as_a_judge import _judge_input_output_expected_agent

    return _judge_input_output_expected_agent


def span_tree_unavailable(reason: str) -> Any:
    """The span tree an ``EvaluatorContext`` of a deterministic check gets: none was recorded."""
    from pydantic_evals.otel._errors import SpanTreeRecordingError

    return SpanTreeRecordingError(reason)


PRIVATE_NAMES = (
    "pydantic_evals.evaluators.llm_as_a_judge._build_prompt",
    "pydantic_evals.evaluators.llm_as_a_judge._judge_input_output_expected_agent",
    "pydantic_evals.otel._errors.SpanTreeRecordingError",
)
