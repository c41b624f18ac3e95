"""A budget holds whatever usage the server reports: none, zero or negative usage is counted as
the tokens estimated from the request and answer characters (said once), and a spend past the
budget, even by calls already in flight or by one call reporting absurd usage, fails the run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pydantic_ai.models
import pytest
from conftest import Suite
from fake_openai import FakeOpenAI, benchmark_yaml, serve

NOT_REPORTED = "the judge server did not report usage"


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    with serve(verdict={"reason": "the output is right " * 8, "pass": True}) as fake:
        yield fake


def run(suite: Suite, fake: FakeOpenAI, *args: str) -> pytest.RunResult:
    url = f"--llmjudge-base-url={fake.url}/v1"
    return suite.run("benchmarks", "--llmjudge-model=gpt-4o-mini", url, "--llmjudge-results=r.json", *args)


def results(suite: Suite) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((suite.root / "r.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(("prompt", "completion"), [(0, 0), (-50, -50)])
def test_a_token_budget_holds_when_the_server_reports_no_usage(
    bare_suite: Suite, judge_server: FakeOpenAI, prompt: int, completion: int
) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(40))
    judge_server.prompt_tokens, judge_server.completion_tokens = prompt, completion
    result = run(bare_suite, judge_server, "--llmjudge-budget-tokens=2000")
    data = results(bare_suite)
    calls = len(judge_server.completions)
    used = data["totals"]["input_tokens"] + data["totals"]["output_tokens"]
    assert 0 < calls < 40 and 0 < used <= 2000, (calls, used)  # each call counted, estimated
    assert data["totals"]["errors"] == 40 - calls
    output = result.stdout.str()
    assert output.count(NOT_REPORTED) == 1, output
    result.stdout.fnmatch_lines([f"*{NOT_REPORTED}*estimated from the characters*"])
    assert result.ret == 1


def test_a_usd_budget_holds_when_the_server_reports_no_usage(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(40))
    judge_server.prompt_tokens = judge_server.completion_tokens = 0
    result = run(bare_suite, judge_server, "--llmjudge-budget=0.0005")  # about 4 calls' estimate
    spent = Decimal(repr(results(bare_suite)["totals"]["cost"]["usd"]))
    assert 0 < spent <= Decimal("0.0005") and 0 < len(judge_server.completions) < 40
    assert result.ret == 1


def test_absurd_usage_past_the_budget_fails_the_run(bare_suite: Suite, judge_server: FakeOpenAI) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(3))
    judge_server.prompt_tokens, judge_server.completion_tokens = 10**12, 10**12
    result = run(bare_suite, judge_server, "--llmjudge-budget=1", "--llmjudge-concurrency=1")
    data = results(bare_suite)
    assert len(judge_server.completions) == 1  # no call starts once the first has spent past it
    reasons = [r for r in data["exit_reasons"] if r.startswith("over budget")]
    assert len(reasons) == 1 and "of $1.00" in reasons[0], data["exit_reasons"]
    result.stdout.fnmatch_lines(["*implausible usage*", "*over budget: spent $*of $1.00*"])
    assert result.ret == 1 and data["exit_status"] == 1


def test_calls_in_flight_that_spend_past_the_budget_fail_the_run(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(2))
    # each call reports more than it was projected to use: both started, together they pass the limit
    judge_server.prompt_tokens, judge_server.completion_tokens = 3000, 100
    judge_server.delay = 0.3
    result = run(bare_suite, judge_server, "--llmjudge-budget-tokens=5000", "--llmjudge-concurrency=2")
    data = results(bare_suite)
    assert len(judge_server.completions) == 2
    assert data["totals"]["input_tokens"] + data["totals"]["output_tokens"] == 6200
    assert any(r.startswith("over budget: spent 6,200 of 5,000 tokens") for r in data["exit_reasons"])
    assert result.ret == 1
