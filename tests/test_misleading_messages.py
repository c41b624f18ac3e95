"""Messages that must not mislead: a missing API key, a verdict that contradicts its score,
long reasons in the calibration report, an empty budget and a model priced twice."""

from __future__ import annotations

import json

import pytest

from pytest_llmjudge.cli.calibrate import report
from pytest_llmjudge.reporting.summary import LIMIT
from tests.conftest import GOOD, Suite

# A judge whose verdict and score disagree: FAIL scored 100, PASS scored 0; and one long reason.
SCORING_CONFTEST = """
import re

from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def judge(messages, info):
    prompt = "".join(
        p.content for m in messages for p in m.parts if isinstance(getattr(p, "content", None), str)
    )
    failed = "FAIL" in re.search(r"<Output>\\n(.*?)\\n</Output>", prompt, re.S).group(1)
    reason = "it is wrong. " * 60 if failed else "fine"
    args = {"pass": not failed, "reason": reason, "score": 100 if failed else 0}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="fake-judge")
"""


def test_a_missing_api_key_names_the_variable_and_the_ways_without_one(
    bare_suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    bare_suite.benchmark("A-OK1", GOOD)
    result = bare_suite.run("--llmjudge-model", "openai:gpt-4o-mini")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "OPENAI_API_KEY is not set: set it in the environment" in err
    assert "--llmjudge-model local" in err and "--llmjudge-cache=replay" in err
    assert "Agent('test')" not in err


def test_a_verdict_that_contradicts_its_score_is_flagged(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(SCORING_CONFTEST)
    suite = Suite(pytester)
    suite.benchmark(
        "A-OK1",
        GOOD.replace("threshold: 1.0", "threshold: 0.5") + "  - id: bad\n    candidate_output: FAIL\n",
    )
    result = suite.run()
    output = result.stdout.str()
    assert "verdict: FAIL   score: 100 (contradicts the verdict: a passing score" in output
    assert (
        "2 verdict(s) contradict their score, the verdict decided: A-OK1::says-hello (PASS, score 0), "
        "A-OK1::bad (FAIL, score 100)" in output
    )


def test_the_calibration_report_cuts_long_reasons(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(SCORING_CONFTEST)
    suite = Suite(pytester)
    suite.benchmark(
        "A-OK1", GOOD.replace("candidate_output: hello", "candidate_output: FAIL\n    label: pass")
    )
    suite.run("--llmjudge-results=run.json")
    lines, _ = report(json.loads((suite.root / "run.json").read_text()))
    (line,) = [line for line in lines if "human pass, judge fail" in line]
    reason = line.split("judge fail: ", 1)[1]
    assert len(reason) <= LIMIT and reason.endswith("…")  # the README's 300 characters


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--llmjudge-budget="], "--llmjudge-budget: empty value; give a number of US dollars"),
        (["--llmjudge-budget-tokens="], "--llmjudge-budget-tokens: empty value; give a number of tokens"),
        (
            ["--llmjudge-price=openai:my-model=1/2", "--llmjudge-price=openai:my-model=3/4"],
            "--llmjudge-price: openai:my-model is priced twice (1/2 and 3/4); give one price per model",
        ),
    ],
)
def test_a_limit_or_price_that_would_be_ignored_is_a_usage_error(
    suite: Suite, options: list[str], message: str
) -> None:
    suite.benchmark("A-OK1", GOOD)
    result = suite.run(*options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert not suite.judge_calls()
