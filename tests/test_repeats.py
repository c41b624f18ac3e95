"""Repeated judge samples: flaky cases, per-case reduction, cached samples reused on a rerun."""

from __future__ import annotations

import json

import numpy  # noqa: F401  (in-process pytester runs cannot import numpy a second time)
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.multitest
import statsmodels.stats.proportion  # noqa: F401
from conftest import Suite

from pytest_llmjudge.gating.repeats import Sample, reduce_samples

# A judge whose verdict alternates call by call for outputs containing "flip".
FLIP_CONFTEST = """
import re
from pathlib import Path

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
CALLS = Path(__file__).parent / "judge_calls.log"
SEEN = {}


def judge(messages, info):
    prompt = "".join(
        p.content for m in messages for p in m.parts if isinstance(getattr(p, "content", None), str)
    )
    output = re.search(r"<Output>\\n(.*?)\\n</Output>", prompt, re.S).group(1)
    SEEN[output] = SEEN.get(output, 0) + 1
    passed = SEEN[output] % 2 == 1 if "flip" in output else "FAIL" not in output
    with CALLS.open("a") as log:
        log.write(output + "\\n")
    args = {"pass": passed, "reason": "alternating" if "flip" in output else "steady"}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="flip-judge")
"""

FLIPPY = """\
code: A-REP1
label: Repeated
concept: The output is fine.
weight: 1
threshold: 0.5
inclusion_criteria: Apply always. Flag if it says FAIL.
judge:
  repeats: 5
cases:
  - id: steady-one
    candidate_output: good one
  - id: flip-two
    candidate_output: flip two
  - id: steady-three
    candidate_output: FAIL three
  - id: flip-four
    candidate_output: flip four
"""


@pytest.fixture
def flip_suite(pytester: pytest.Pytester) -> Suite:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(FLIP_CONFTEST)
    return Suite(pytester)


def _results(suite: Suite) -> dict:  # type: ignore[type-arg]
    return json.loads((suite.root / "run.json").read_text())


def test_cases_whose_samples_disagree_are_listed_as_flaky(flip_suite: Suite) -> None:
    flip_suite.benchmark("A-REP1", FLIPPY)
    result = flip_suite.run("--llmjudge-results", "run.json", "--junitxml", "junit.xml")
    output = result.stdout.str()
    assert "flaky cases (2: repeated judge samples disagree):" in output
    assert "A-REP1::flip-two: 3 of 5 samples pass" in output
    assert "A-REP1::flip-four: 3 of 5 samples pass" in output
    assert "steady-one: " not in output.split("flaky cases")[1].split("\n\n")[0]
    assert len(flip_suite.judge_calls()) == 20  # 4 cases x 5 samples
    data = _results(flip_suite)
    cases = {c["id"]: c for c in data["benchmarks"][0]["cases"]}
    assert {i for i, c in cases.items() if c["flaky"]} == {"flip-two", "flip-four"}
    assert cases["flip-two"]["stability"] == pytest.approx(0.6)
    samples = cases["flip-two"]["samples"]  # judged concurrently: which index got which call varies
    assert [s["index"] for s in samples] == [0, 1, 2, 3, 4]
    assert sorted(s["pass"] for s in samples) == [False, False, True, True, True]
    assert data["benchmarks"][0]["gate"]["flaky"] == 2
    assert data["totals"]["flaky"] == 2
    # the interval counts what the gate counts: the 4 cases' reduced verdicts, not 20 samples
    assert (data["benchmarks"][0]["gate"]["interval_method"], data["benchmarks"][0]["gate"]["basis"]) == (
        "wilson",
        "cases",
    )
    assert 'name="llmjudge_flaky" value="true"' in (flip_suite.root / "junit.xml").read_text()
    assert "repeats at temperature 0 (A-REP1)" in output


def test_a_rerun_reuses_every_cached_sample(flip_suite: Suite) -> None:
    flip_suite.benchmark("A-REP1", FLIPPY)
    flip_suite.run("--llmjudge-results", "first.json")
    calls = len(flip_suite.judge_calls())
    assert calls == 20
    result = flip_suite.run("--llmjudge-results", "second.json")
    assert (flip_suite.root / "second.json").exists(), result.stdout.str()
    assert len(flip_suite.judge_calls()) == calls  # 0 model calls the second time
    second = json.loads((flip_suite.root / "second.json").read_text())
    assert second["totals"]["cache_hits"] == 20 and second["totals"]["calls"] == 0


def test_sample_zero_keeps_the_single_sample_cache_key(flip_suite: Suite) -> None:
    flip_suite.benchmark("A-REP1", FLIPPY.replace("  repeats: 5", "  repeats: 1"))
    flip_suite.run("--llmjudge-results", "one.json")
    assert len(flip_suite.judge_calls()) == 4
    flip_suite.run("--llmjudge-results", "three.json", "--llmjudge-repeats", "3")
    # judge.repeats in the file wins over the option: still one sample, all cached
    assert len(flip_suite.judge_calls()) == 4
    flip_suite.benchmark("A-REP1", FLIPPY.replace("judge:\n  repeats: 5\n", ""))
    flip_suite.run("--llmjudge-results", "three-b.json", "--llmjudge-repeats", "3")
    assert len(flip_suite.judge_calls()) == 4 + 4 * 2  # sample 0 of each case came from the cache


@pytest.mark.parametrize(
    ("rule", "passes", "expected"),
    [
        ("majority", [True, True, False], True),
        ("majority", [True, False], False),  # a tie fails
        ("all", [True, True, False], False),
        ("any", [False, False, True], True),
        ("mean", [True, False, False, True], True),
    ],
)
def test_reduce_rules(rule: str, passes: list[bool], expected: bool) -> None:
    result = reduce_samples([Sample(p) for p in passes], rule)
    assert result.passed is expected
    assert result.flaky is (len(set(passes)) > 1)


def test_mean_uses_scores_when_every_sample_has_one() -> None:
    assert reduce_samples([Sample(False, 0.6), Sample(False, 0.5)], "mean").passed is True
    assert reduce_samples([Sample(True, 0.2), Sample(True, 0.4)], "mean").passed is False
