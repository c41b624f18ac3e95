"""A pairwise judge's failed attempts are billed as a single judge's are: a chain-of-thought answer
that cannot be read was still made, so its tokens count in the results file and in the budget."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Suite

UNREADABLE_CONFTEST = """
import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


def judge(messages, info):
    # reasons at length, then never names a winner: the answer cannot be read
    usage = RequestUsage(input_tokens=1000, output_tokens=50)
    return ModelResponse(parts=[TextPart("<reasoning>hard to say</reasoning> no verdict")], usage=usage)


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="pair-judge")
"""

BENCHMARK = (
    "code: P-BILL\nlabel: billed\nconcept: The output is good.\nweight: 1\nthreshold: 0.9\n"
    "inclusion_criteria: Apply always. Flag a bad output.\n"
    "judge: {prompt_style: short_cot}\n"
    "cases:\n"
    "  - id: one\n    candidate_output: candidate words\n    baseline_output: baseline words\n"
)


@pytest.fixture
def unreadable(pytester: pytest.Pytester) -> Suite:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(UNREADABLE_CONFTEST)
    suite = Suite(pytester)
    suite.benchmark("P-BILL", BENCHMARK)
    return suite


def run(suite: Suite, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = suite.run(
        "benchmarks", "--llmjudge-pairwise", "--llmjudge-attempts=2", "--llmjudge-results=r.json", *args
    )
    return result, json.loads((suite.root / "r.json").read_text(encoding="utf-8"))


def test_unreadable_pairwise_answers_are_billed_in_the_results_file(unreadable: Suite) -> None:
    result, data = run(unreadable)
    assert result.parseoutcomes()["errors"] == 1
    # two orders, two attempts each: four answers of 1,000 + 50 tokens, none readable
    assert (data["totals"]["input_tokens"], data["totals"]["output_tokens"]) == (4000, 200), data["totals"]
    result.stdout.fnmatch_lines(["judge: 0 verdict(s), 4 model call(s),*tokens in/out 4000/200*"])


def test_unreadable_pairwise_answers_count_toward_the_budget(unreadable: Suite) -> None:
    result, data = run(unreadable, "--llmjudge-budget-tokens=2000", "--llmjudge-concurrency=1")
    # the first answer's 1,050 tokens, as used (not as projected), leave too little for another
    result.stdout.fnmatch_lines(["*judge ERROR (budget)*budget reached: spent 1,050 of 2,000 tokens*"])
    assert (data["totals"]["input_tokens"], data["totals"]["output_tokens"]) == (1000, 50), data["totals"]
