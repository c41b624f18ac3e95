"""The pieces between a priced call and the outputs, without pytester: usage sums, retries that
reserve and settle, records summed per case and benchmark, the partial gate and the exit reason
of a budget stop, the summary line and column, settings, and the cache's token history."""

from __future__ import annotations

import asyncio
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.compile.request import CompiledRequest
from pytest_llmjudge.cost.budget import Budget
from pytest_llmjudge.cost.spending import CallBudget, priced_usage
from pytest_llmjudge.execution.cache import VerdictCache, output_history, token_history
from pytest_llmjudge.execution.retries import RetryPolicy, judge_with_retries
from pytest_llmjudge.gating.costs import benchmark_costs, case_cost, cost_of
from pytest_llmjudge.gating.exit_status import decide_exit
from pytest_llmjudge.gating.gates import benchmark_gates, why
from pytest_llmjudge.gating.records import CaseRecord, ProducedOutput, SampleRecord
from pytest_llmjudge.judging.verdict import JudgeFailure, Usage, Verdict, total_usage
from pytest_llmjudge.reporting.summary import Stats, benchmark_table
from pytest_llmjudge.suite.settings import resolve

REQUEST = CompiledRequest("B1", "c1", "", "Pass if right.", "{}", None, '"o"', "no_reasoning")
CALL = Decimal("0.0003")


# -- usage ----------------------------------------------------------------------------------------


def test_usage_adds_costs_and_an_unpriced_call_makes_the_sum_unknown() -> None:
    priced = Usage(1, 100, 10, cost=Decimal("0.0001"))
    assert total_usage([priced, priced]).cost == Decimal("0.0002")
    assert total_usage([priced, Usage(1, 50, 5)]).spent is None  # tokens without a price
    assert total_usage([priced, Usage()]).spent == Decimal("0.0001")  # no call, no cost
    assert Usage().spent == 0 and total_usage([]) == Usage()


def test_each_response_is_priced_on_its_own() -> None:
    from pytest_llmjudge.cost.pricing import cost_of, price_for

    price = price_for("openai:gpt-4o-mini")
    assert price is not None

    class Response:
        def __init__(self, tokens_in: int, cached: int, tokens_out: int) -> None:
            self.input_tokens, self.cache_read_tokens, self.output_tokens = tokens_in, cached, tokens_out

    usage = priced_usage(price, [Response(1000, 600, 50), Response(200, 0, 20)], request_chars=42)
    assert (usage.requests, usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (
        2,
        1200,
        600,
        70,
    )
    assert usage.cost == cost_of(price, 1000, 600, 50) + cost_of(price, 200, 0, 20)
    assert usage.request_chars == 42
    assert priced_usage(None, [Response(10, 0, 1)]).spent is None  # counted, not priced


# -- retries under a budget ---------------------------------------------------------------------


def judge(answers: list[Any], budget: CallBudget | None, attempts: int = 3) -> Any:
    answers = list(answers)

    async def call(request: CompiledRequest) -> tuple[Verdict, Usage]:
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def no_sleep(seconds: float) -> None:
        return None

    policy = RetryPolicy(attempts=attempts, timeout=5)
    return asyncio.run(judge_with_retries(REQUEST, call, policy, "m", no_sleep, budget=budget))


def test_a_failed_attempt_that_was_answered_is_billed_with_the_verdict() -> None:
    billed = Usage(1, 100, 10, cost=Decimal("0.0001"))
    invalid = JudgeFailure("invalid-output", "no", True, usage=billed)
    outcome = judge([invalid, (Verdict(True, "ok"), billed)], None)
    assert outcome.verdict is not None and outcome.attempts == 2
    assert outcome.usage.cost == Decimal("0.0002") and outcome.usage.input_tokens == 200
    assert outcome.usage.requests == 1  # the summary counts the retried attempt itself


def test_an_attempt_the_budget_refuses_is_a_budget_error_never_retried() -> None:
    limit = Budget(Decimal("0.0005"))
    budget = CallBudget(limit, CALL, 100)
    spent = Usage(1, 100, 10, cost=CALL)
    assert judge([(Verdict(True, "ok"), spent)], budget).verdict is not None
    outcome = judge([(Verdict(True, "ok"), spent)], budget)  # 0.0003 + 0.0003 > 0.0005
    assert outcome.failure == JudgeFailure("budget", "budget reached: spent $0.0003 of $0.0005")
    assert outcome.attempts == 0 and limit.in_flight == 0


def test_an_attempt_that_timed_out_settles_at_its_projection_and_an_http_error_at_nothing() -> None:
    limit = Budget(Decimal("0.01"))
    budget = CallBudget(limit, CALL, 100)
    http = JudgeFailure("http-503", "busy", True)
    outcome = judge([JudgeFailure("timeout", "slow", True), http, JudgeFailure("transport", "reset")], budget)
    assert outcome.failure is not None and outcome.failure.kind == "transport"
    assert limit.spent == 2 * CALL and limit.spent_tokens == 200  # the timeout and the reset


# -- records, gates, exit -----------------------------------------------------------------------


def test_a_case_costs_its_samples_and_its_task_call() -> None:
    samples = [SampleRecord(0, True, cost_usd=0.00018), SampleRecord(1, True, cached=True, saved_usd=0.00018)]
    task = ProducedOutput("task", "x", "openai:gpt-4o-mini", cost_usd=0.0001)
    assert case_cost(samples, task) == (0.00028, 0.00018)
    assert case_cost([SampleRecord(0, True, cost_usd=None)], None) == (None, 0.0)


def record(case: str, cost: float | None, result: str = "pass", **extra: Any) -> CaseRecord:
    sample = SampleRecord(0, result == "pass", cost_usd=cost)
    return CaseRecord("B1", case, result, f"B1::{case}", threshold=0.5, model="m", samples=(sample,), **extra)


def test_costs_sum_per_benchmark_and_name_each_unpriced_model_once() -> None:
    records = [record("a", 0.1), record("b", 0.2), record("c", None), record("d", None)]
    total = cost_of(records)
    assert (total.usd, total.known, total.unpriced) == (Decimal("0.3"), None, ("m",))
    assert total.text() == "$0.30 + unknown" and len(total.notes()) == 1
    assert benchmark_costs(records[:2])["B1"].text() == "$0.30"


def test_cases_the_budget_stopped_make_their_gate_partial_and_the_exit_says_why() -> None:
    stopped = {"budget_stopped": True, "reason": "budget: budget reached: spent $0.30 of $0.40"}
    records = [record("a", 0.1), record("b", 0.2), record("c", 0.0, "error", **stopped)]
    (gate,) = benchmark_gates(records, {"B1": 3})
    assert gate.status == "partial" and gate.unjudged == 1
    assert why(gate) == "budget reached before 1 of 3 cases were judged: the gate needs all"
    decision = decide_exit(
        1, benchmarks=[gate], rubrics=[], broken=False, snapshot_failed=False,
        failed_nodeids={"B1::c"}, records=records,
    )  # fmt: skip
    assert decision.status == 1
    assert "the budget stopped the run: 1 case(s) not judged (budget reached: spent $0.30 of $0.40)" in (
        decision.reasons
    )


def test_an_error_of_another_kind_does_not_make_a_gate_partial() -> None:
    records = [record("a", 0.1), record("b", 0.2), record("c", 0.0, "error", reason="http-500: x")]
    (gate,) = benchmark_gates(records, {"B1": 3})
    assert gate.status == "pass" and gate.errors == 1


# -- summary --------------------------------------------------------------------------------------


def test_the_judge_line_says_the_cost_and_what_the_cache_saved() -> None:
    cached = SampleRecord(0, True, cached=True, saved_usd=0.00018)
    records = [record("a", 0.00018), CaseRecord("B1", "b", "pass", model="m", cached=True, samples=(cached,))]
    stats = Stats.from_records(records)
    assert stats.line().endswith(", cost $0.00018 (the cache saved $0.00018)")
    assert stats.cost_notes() == []
    unpriced = Stats.from_records([record("a", None)])
    assert unpriced.line().endswith(", cost unknown") and "no price known for m" in unpriced.cost_notes()[0]


def test_the_gate_table_has_a_cost_column_before_the_kind() -> None:
    gates = benchmark_gates([record("a", 0.1)], {"B1": 1})
    header, _, row = benchmark_table(gates, {"B1": "$0.10"})
    assert header.index("threshold") < header.index("cost") < header.index("kind") and "$0.10" in row.split()
    assert "cost" not in benchmark_table(gates)[0]


# -- settings -------------------------------------------------------------------------------------


def test_prices_come_one_per_option_line_or_comma_and_budgets_are_checked() -> None:
    settings = resolve(lambda n: ["a=1/2", "b=3/4,c=5/6"] if n == "price" else None, lambda n: None, env={})
    assert settings.price == ("a=1/2", "b=3/4", "c=5/6")
    from_ini = resolve(lambda n: None, lambda n: ["x=1/1", "y=2/2"] if n == "price" else None, env={})
    assert from_ini.price == ("x=1/1", "y=2/2")
    env = {"LLMJUDGE_BUDGET": "2.5", "LLMJUDGE_BUDGET_TOKENS": "100000"}
    assert resolve(lambda n: None, lambda n: None, env=env).budget == 2.5
    with pytest.raises(ValueError, match="--llmjudge-budget: must be a finite number of US dollars"):
        resolve(lambda n: "-1" if n == "budget" else None, lambda n: None, env={})
    with pytest.raises(ValueError, match="--llmjudge-budget-tokens: must be 0 or more tokens"):
        resolve(lambda n: "-5" if n == "budget_tokens" else None, lambda n: None, env={})


# -- the verdict cache's token history -----------------------------------------------------------


def test_the_cache_keeps_each_calls_request_characters_and_older_files_gain_the_column(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.sqlite"
    cache = VerdictCache(path)
    cache.put("k1", Verdict(True, "ok"), "m", Usage(1, 100, 30, request_chars=420), "B1", "c1")
    cache.put("k2", Verdict(True, "ok"), "m", Usage(1, 200, 10), "B1", "c2")  # length not known
    assert token_history(cache, "m") == [(420, 100)] and sorted(output_history(cache, "B1", "m")) == [10, 30]
    cache.close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE verdicts DROP COLUMN request_chars")  # a file from before the column
    db.commit()
    db.close()
    older = VerdictCache(path, read_only=True)
    assert token_history(older, "m") == [] and older.get("k1") is not None
    older.close()
    upgraded = VerdictCache(path)  # a writable open adds it
    upgraded.put("k3", Verdict(True, "ok"), "m", Usage(1, 50, 5, request_chars=200), "B1", "c3")
    assert token_history(upgraded, "m") == [(200, 50)]
    upgraded.close()
