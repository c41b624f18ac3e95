"""Run-level: what a run costs, its estimate and its budget, against a loopback OpenAI-compatible
server that reports usage (``fake_openai``), judged as ``openai:gpt-4o-mini`` so genai-prices
prices it as OpenAI's."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pydantic_ai.models
import pytest
from conftest import Suite
from fake_openai import FakeOpenAI, benchmark_yaml, serve
from genai_prices import Usage, calc_price

from pytest_llmjudge.cli.main import main as cli_main
from pytest_llmjudge.cost.pricing import format_usd

# A verdict whose answer is about 80 tokens, as a judge's sentence or two of reason is.
REASON = ("the output matches the ground truth in every field that the rubric names " * 4).strip()
SLOTS = 2  # --llmjudge-concurrency of the budget runs


def gpt_4o_mini(input_tokens: int, output_tokens: int, cached: int = 0) -> Decimal:
    """genai-prices' own calculation of one gpt-4o-mini request."""
    usage = Usage(input_tokens=input_tokens, cache_read_tokens=cached, output_tokens=output_tokens)
    return calc_price(usage, "gpt-4o-mini", provider_id="openai").total_price


def usd(value: float | None) -> Decimal:
    assert value is not None
    return Decimal(repr(value))


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """Answers every call with a passing verdict; usage counted from what was sent (4 characters a
    token) unless a test fixes it."""
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    with serve(prompt_tokens=None, completion_tokens=None, verdict={"reason": REASON, "pass": True}) as fake:
        yield fake


def run(suite: Suite, fake: FakeOpenAI, *args: str, model: str = "gpt-4o-mini") -> pytest.RunResult:
    url = f"--llmjudge-base-url={fake.url}/v1"
    return suite.run("benchmarks", f"--llmjudge-model={model}", url, *args)


def results(suite: Suite, name: str = "r.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((suite.root / name).read_text(encoding="utf-8"))
    return data


def samples(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for b in data["benchmarks"] for c in b["cases"] for s in c["samples"]]


def estimated(output: str) -> tuple[int, Decimal]:
    """The calls and the cost of an estimate's total line."""
    found = re.search(r"total: (\d+) calls, .* tokens, \$([\d.,]+) \(", output)
    assert found, output
    return int(found.group(1)), Decimal(found.group(2).replace(",", ""))


def test_the_cost_in_the_results_file_is_genai_prices_own_calculation_of_the_usage(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(3))
    judge_server.prompt_tokens, judge_server.completion_tokens, judge_server.cached_tokens = 1000, 50, 600
    result = run(bare_suite, judge_server, "--llmjudge-results=r.json", "--llmjudge-html=r.html")
    result.assert_outcomes(passed=4)  # the prompt item and 3 cases
    each = gpt_4o_mini(1000, 50, cached=600)
    data = results(bare_suite)
    assert [usd(s["cost_usd"]) for s in samples(data)] == [each] * 3
    assert [s["cached_input_tokens"] for s in samples(data)] == [600] * 3
    assert [usd(c["cost_usd"]) for c in data["benchmarks"][0]["cases"]] == [each] * 3
    cost = data["totals"]["cost"]
    assert usd(data["benchmarks"][0]["cost"]["usd"]) == usd(cost["usd"]) == 3 * each
    assert cost["unpriced"] == [] and cost["saved_usd"] == 0
    shown = format_usd(3 * each)
    result.stdout.fnmatch_lines([f"B1 * {shown} *", f"judge: 3 verdict(s), 3 model call(s), *, cost {shown}"])
    assert shown in (bare_suite.root / "r.html").read_text(encoding="utf-8")
    # cached: nothing spent, and each hit says what its call would cost now (its stored tokens)
    again = run(bare_suite, judge_server, "--llmjudge-results=r.json")
    again.assert_outcomes(passed=4)
    cost = results(bare_suite)["totals"]["cost"]
    assert cost["usd"] == 0 and usd(cost["saved_usd"]) == 3 * gpt_4o_mini(1000, 50)
    assert len(judge_server.completions) == 3


def test_the_estimate_of_a_fresh_suite_calls_nothing_and_is_within_20_percent_of_the_run(
    bare_suite: Suite, judge_server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(6))
    estimate = run(bare_suite, judge_server, "--llmjudge-estimate")
    assert estimate.ret == 0 and judge_server.completions == []
    estimate.stdout.fnmatch_lines(
        [
            "*llmjudge estimate*",
            "*B1: 6 judge calls (6 misses, 6 samples, 1 order)*approximate: input tokens (4 characters "
            "a token), output tokens (default)",
            "price of openai:gpt-4o-mini@*: $0.15/$0.6 per Mtok in/out*(genai-prices: openai)",
        ]
    )
    calls, cost = estimated(estimate.stdout.str())
    url = f"--llmjudge-base-url={judge_server.url}/v1"
    assert cli_main(["estimate", "benchmarks", "--llmjudge-model=gpt-4o-mini", url]) == 0
    assert estimated(capsys.readouterr().out) == (calls, cost)  # the command prints the same
    assert judge_server.completions == []

    run(bare_suite, judge_server, "--llmjudge-results=r.json").assert_outcomes(passed=7)
    actual = usd(results(bare_suite)["totals"]["cost"]["usd"])
    assert calls == len(judge_server.completions) == 6
    assert abs(cost - actual) <= Decimal("0.2") * actual, (cost, actual)
    # estimated again: every verdict is cached
    again = run(bare_suite, judge_server, "--llmjudge-estimate")
    again.stdout.fnmatch_lines(["total: 0 calls, 0 in / 0 out tokens, $0.00*", "6 judge sample(s)*cache*"])


def test_a_budget_of_a_third_stops_within_a_call_per_slot_and_a_larger_one_judges_only_the_rest(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    cases = 12
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(cases))
    judge_server.delay = 0.02  # calls overlap: two in flight at a time
    concurrency = f"--llmjudge-concurrency={SLOTS}"
    # what the whole suite costs, judged into a cache of its own
    full = run(
        bare_suite,
        judge_server,
        concurrency,
        "--llmjudge-cache-path=full.sqlite",
        "--llmjudge-results=f.json",
    )
    full.assert_outcomes(passed=cases + 1)
    whole = results(bare_suite, "f.json")
    total = usd(whole["totals"]["cost"]["usd"])
    largest = max(usd(s["cost_usd"]) for s in samples(whole))

    budget = total / 3
    stopped = run(
        bare_suite, judge_server, concurrency, f"--llmjudge-budget={budget}", "--llmjudge-results=r.json"
    )
    data = results(bare_suite)
    spent = usd(data["totals"]["cost"]["usd"])
    made = len(judge_server.completions) - cases
    assert spent <= budget and budget - spent < SLOTS * largest, (spent, budget, largest)
    judged = [c for c in data["benchmarks"][0]["cases"] if c["result"] == "pass"]
    refused = [c for c in data["benchmarks"][0]["cases"] if c["result"] == "error"]
    assert len(judged) == made and len(refused) == cases - made > 0
    assert all(
        re.search(r"^budget: budget reached: spent \$[\d.]+ of \$[\d.]+$", c["reason"]) for c in refused
    )
    assert all(c["cost_usd"] == 0 for c in refused)
    assert stopped.ret == 1 and data["benchmarks"][0]["gate"]["status"] == "partial"
    stopped.stdout.fnmatch_lines(
        [f"*the budget stopped the run: {len(refused)} case(s) not judged (budget reached*"]
    )

    rerun = run(
        bare_suite, judge_server, concurrency, f"--llmjudge-budget={10 * total}", "--llmjudge-results=r.json"
    )
    rerun.assert_outcomes(passed=cases + 1)
    assert len(judge_server.completions) - cases - made == len(refused)  # only the refused ones
    assert results(bare_suite)["totals"]["cache_hits"] == made


def test_one_budget_holds_for_all_xdist_workers(bare_suite: Suite, judge_server: FakeOpenAI) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(12))
    judge_server.prompt_tokens, judge_server.completion_tokens = 1000, 50  # $0.00018 a call
    judge_server.delay = 0.02
    url = f"--llmjudge-base-url={judge_server.url}/v1"
    result = bare_suite.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "-n", "2", "benchmarks", "--llmjudge-model=gpt-4o-mini",
        url, "--llmjudge-concurrency=2", "--llmjudge-budget=0.0009", "--llmjudge-results=r.json",
    )  # fmt: skip
    each = gpt_4o_mini(1000, 50)
    # the projection of a call is above its cost, so the budget stops at fewer than 5 calls, but one
    # budget for both workers: each holding $0.0009 of its own would have made up to 10
    assert 1 <= len(judge_server.completions) <= 5
    cost = results(bare_suite)["totals"]["cost"]
    assert usd(cost["usd"]) == len(judge_server.completions) * each <= Decimal("0.0009")
    result.stdout.fnmatch_lines(["*the budget stopped the run*"])


def test_a_token_budget_holds_the_same_way(bare_suite: Suite, judge_server: FakeOpenAI) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(8))
    judge_server.prompt_tokens, judge_server.completion_tokens = 400, 100  # 500 tokens a call
    result = run(
        bare_suite, judge_server, "--llmjudge-concurrency=1", "--llmjudge-budget-tokens=2000",
        "--llmjudge-results=r.json",
    )  # fmt: skip
    data = results(bare_suite)
    calls = len(judge_server.completions)
    # each call spends its input and its output tokens: the budget counts both, as the results do
    assert data["totals"]["input_tokens"] + data["totals"]["output_tokens"] == 500 * calls <= 2000
    assert 0 < calls < 8 and data["totals"]["errors"] == 8 - calls
    result.stdout.fnmatch_lines([f"*budget reached: spent {500 * calls:,} of 2,000 tokens*"])


def test_a_model_without_a_price_counts_its_tokens_and_says_why_it_has_no_cost(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(2))
    label = f"openai:my-llama@{judge_server.url}/v1"
    result = run(bare_suite, judge_server, "--llmjudge-results=r.json", model="my-llama")
    result.assert_outcomes(passed=3)
    data = results(bare_suite)
    assert data["totals"]["input_tokens"] > 0 and data["totals"]["output_tokens"] > 0
    cost = data["totals"]["cost"]
    assert cost["usd"] is None and [u["model"] for u in cost["unpriced"]] == [label]
    assert "no price known for" in cost["unpriced"][0]["reason"]
    assert all(s["cost_usd"] is None for s in samples(data))
    output = result.stdout.str()
    assert output.count(f"no price known for {label}") == 1  # said once, not per call
    result.stdout.fnmatch_lines(["judge: 2 verdict(s), *, tokens in/out *, cost unknown"])

    # a budget summed over only the priced calls is no budget: the run stops before its first call
    refused = run(bare_suite, judge_server, "--llmjudge-budget=1", "--llmjudge-cache=off", model="my-llama")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines([f"*no price is known for {label}*--llmjudge-price {label}=IN/OUT*"])
    assert len(judge_server.completions) == 2

    # a price given for it makes it a priced model: USD per million input / output tokens
    priced = run(bare_suite, judge_server, "--llmjudge-cache=off", "--llmjudge-results=r.json",
                 "--llmjudge-price=my-llama=1/2", "--llmjudge-budget=1", model="my-llama")  # fmt: skip
    priced.assert_outcomes(passed=3)
    for sample in samples(results(bare_suite)):
        assert usd(sample["cost_usd"]) == (
            sample["input_tokens"] * 1 + sample["output_tokens"] * 2
        ) / Decimal(10**6)


MODEL_TASK = """\
code: T1
concept: The output is right.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
task:
  model: openai:gpt-4o-mini
  base_url: {url}/v1
  prompt_file: prompts/task.yaml
cases:
  - {{id: c0, source_narrative: alpha}}
  - {{id: c1, source_narrative: beta}}
"""

TASK_PROMPT = """\
messages:
  - role: user
    content: "Narrative: {{ source_narrative }}"
template_variables: [source_narrative]
"""


def test_a_model_task_call_is_priced_with_its_case_and_the_cache_saves_it(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    judge_server.prompt_tokens, judge_server.completion_tokens = 1000, 50
    bare_suite.write("prompts/task.yaml", TASK_PROMPT)
    bare_suite.write("benchmarks/T1.yaml", MODEL_TASK.format(url=judge_server.url))
    estimate = run(bare_suite, judge_server, "--llmjudge-estimate")
    estimate.stdout.fnmatch_lines(["*T1: 2 judge calls (2 misses, 2 samples, 1 order) + 2 task calls, *"])
    assert judge_server.completions == []
    run(bare_suite, judge_server, "--llmjudge-results=r.json").assert_outcomes(passed=3)
    each = gpt_4o_mini(1000, 50)
    data = results(bare_suite)
    cases = data["benchmarks"][0]["cases"]
    assert [usd(c["produced"]["cost_usd"]) for c in cases] == [each, each]  # the task's call
    assert [usd(c["cost_usd"]) for c in cases] == [2 * each, 2 * each]  # the task's and the judge's
    assert usd(data["totals"]["cost"]["usd"]) == 4 * each and len(judge_server.completions) == 4
    run(bare_suite, judge_server, "--llmjudge-results=r.json").assert_outcomes(passed=3)
    cases = results(bare_suite)["benchmarks"][0]["cases"]
    assert [c["produced"]["source"] for c in cases] == ["task cache"] * 2
    assert [usd(c["saved_usd"]) for c in cases] == [2 * each, 2 * each] and [
        c["cost_usd"] for c in cases
    ] == [0, 0]


def test_a_task_call_past_the_budget_is_its_cases_task_error_and_no_call(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    bare_suite.write("prompts/task.yaml", TASK_PROMPT)
    bare_suite.write("benchmarks/T1.yaml", MODEL_TASK.format(url=judge_server.url))
    # a task answer's projection (no history: 2 × 500 output tokens) is above $0.0001
    result = run(bare_suite, judge_server, "--llmjudge-budget=0.0001", "-rE")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*task ERROR (task-budget)*budget reached: spent $0.00 of $0.0001*"])
    assert judge_server.completions == []


def test_a_malformed_price_is_a_usage_error_naming_it(bare_suite: Suite, judge_server: FakeOpenAI) -> None:
    bare_suite.write("benchmarks/B1.yaml", benchmark_yaml(1))
    result = run(bare_suite, judge_server, "--llmjudge-price=my-llama=cheap")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llmjudge-price 'my-llama=cheap': expected MODEL=IN/OUT*"])


PAIRWISE = """\
code: P1
concept: The output is right.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
cases:
  - {id: c0, candidate_output: new answer 0, baseline_output: old answer 0}
  - {id: c1, candidate_output: new answer 1, baseline_output: old answer 1}
  - {id: same, candidate_output: one answer, baseline_output: one answer}
"""


def test_each_order_of_a_pairwise_case_is_estimated_priced_and_budgeted(
    bare_suite: Suite, judge_server: FakeOpenAI
) -> None:
    bare_suite.write("benchmarks/P1.yaml", PAIRWISE)
    judge_server.verdict = {"winner": "tie", "reason": REASON}
    judge_server.prompt_tokens, judge_server.completion_tokens = 1000, 50
    estimate = run(bare_suite, judge_server, "--llmjudge-pairwise", "--llmjudge-estimate")
    # two orders of the two cases that differ; identical outputs need no call
    estimate.stdout.fnmatch_lines(["*P1: 4 judge calls (4 misses, 4 samples, 1 order)*"])
    assert judge_server.completions == []
    run(bare_suite, judge_server, "--llmjudge-pairwise", "--llmjudge-results=r.json").assert_outcomes(
        passed=4
    )
    each = gpt_4o_mini(1000, 50)
    data = results(bare_suite)
    cases = {c["id"]: c for c in data["benchmarks"][0]["cases"]}
    assert [usd(a["cost_usd"]) for a in cases["c0"]["pairwise"]["answers"]] == [each, each]
    assert usd(cases["c0"]["cost_usd"]) == 2 * each and cases["same"]["cost_usd"] == 0
    assert usd(data["totals"]["cost"]["usd"]) == 4 * each == len(judge_server.completions) * each
    # a budget below one order's projection: no order starts
    refused = run(
        bare_suite, judge_server, "--llmjudge-pairwise", "--llmjudge-cache=off", "--llmjudge-budget=0.0001"
    )
    assert refused.ret == 1 and len(judge_server.completions) == 4
    refused.stdout.fnmatch_lines(["*the budget stopped the run: 2 case(s) not judged*"])
