"""Values exactly at a limit, one per limit a user can meet: a Retry-After of exactly the cap, a
p-value of exactly 0.001, YAML nested exactly past 100 levels, brackets inside JSON strings, and
the client's own retries, which change no verdict and so no cache key."""

from __future__ import annotations

import asyncio
import random

import pytest

from pytest_llmjudge.compile.request import CompiledRequest
from pytest_llmjudge.execution.cache import cache_key
from pytest_llmjudge.execution.retries import RetryPolicy, judge_with_retries
from pytest_llmjudge.judging.verdict import JudgeFailure, Outcome, Usage, Verdict
from pytest_llmjudge.reporting.html import p_value
from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.nesting import MAX_DEPTH, json_too_deep, yaml_depth_bound
from pytest_llmjudge.suite.yamlsrc import load_yaml

VERDICT = Verdict(True, "fine")
REQUEST = CompiledRequest("B1", "c1", "Be strict.", "Pass if right.", "{}", "{}", "{}", "no_reasoning")


def refused_once(retry_after: float, policy: RetryPolicy) -> tuple[Outcome, list[float], list[float]]:
    """A judge call refused once with ``retry_after``, then answering: the outcome, the delays
    slept and the back-offs asked of the other calls to the server."""
    answers: list[JudgeFailure | None] = [JudgeFailure("rate-limited", "slow down", True, retry_after), None]
    slept: list[float] = []
    backed_off: list[float] = []

    async def call(request: CompiledRequest) -> tuple[Verdict, Usage]:
        failure = answers.pop(0)
        if failure is not None:
            raise failure
        return VERDICT, Usage(1, 10, 2)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    run = judge_with_retries(
        REQUEST, call, policy, "fake:judge", sleep, random.Random(7), back_off=backed_off.append
    )
    return asyncio.run(run), slept, backed_off


def test_a_retry_after_of_exactly_the_cap_is_honoured() -> None:
    policy = RetryPolicy(attempts=2, max_delay=30)
    outcome, slept, backed_off = refused_once(policy.max_pause, policy)
    assert outcome.verdict == VERDICT
    assert backed_off == [policy.max_pause] and slept == [30]


def test_a_retry_after_of_zero_retries_at_once() -> None:
    outcome, slept, backed_off = refused_once(0.0, RetryPolicy(attempts=2, base_delay=1.0))
    assert outcome.verdict == VERDICT
    assert backed_off == [0.0] and slept == [0.0]


@pytest.mark.parametrize(("value", "shown"), [(0.000999, "< 0.001"), (0.001, "0.001"), (0.0014, "0.001")])
def test_p_values_under_a_thousandth_are_shown_as_such(value: float, shown: str) -> None:
    assert p_value(value) == shown


def test_the_clients_retries_change_no_cache_key() -> None:
    key = cache_key("digest", "openai:judge", {"temperature": 0.0})
    assert cache_key("digest", "openai:judge", {"temperature": 0.0, "max_retries": 3}) == key
    assert cache_key("digest", "openai:judge", {"temperature": 0.0, "timeout": 5, "max_retries": 0}) == key


def block_yaml(levels: int) -> str:
    """A key, then a sequence at the key's own column, each one column further in: two levels of
    nesting per column, the deepest block YAML can go in the fewest columns."""
    lines = []
    for i in range(levels):
        lines += [" " * i + "k:", " " * i + "-"]
    return "\n".join([*lines, " " * levels + "k: end"]) + "\n"


def test_block_yaml_nested_past_the_limit_is_refused() -> None:
    text = block_yaml(75)  # 151 levels within 75 columns
    assert yaml_depth_bound(text) > MAX_DEPTH
    with pytest.raises(SpecError, match=f"values nest more than {MAX_DEPTH} levels deep"):
        load_yaml(text, "deep.yaml")


def test_block_yaml_within_the_limit_loads() -> None:
    assert load_yaml(block_yaml(40), "fine.yaml").data is not None  # 81 levels


def test_brackets_inside_json_strings_do_not_nest() -> None:
    brackets = "[" * (MAX_DEPTH + 50)
    assert json_too_deep('{"id": "a", "candidate_output": "' + brackets + '"}') is None
    assert json_too_deep('{"id": "a", "note": "say \\"' + brackets + '\\" twice"}') is None
    nested = '{"id": "a", "candidate_output": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    assert json_too_deep(nested) == nested.index("[") + MAX_DEPTH - 1  # the outer object is a level
    assert json_too_deep("[" * MAX_DEPTH + "]" * MAX_DEPTH) is None
