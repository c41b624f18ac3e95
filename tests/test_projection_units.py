"""What one judge call reserves in a run's budget (``execution/projection.py``), in process: the
request text it sends, counted four characters a token (or at the ratio of the model's earlier
calls in the verdict cache), plus the answer it may give (the style's default, the run's
``max_tokens``, or the benchmark's earlier answers), priced when the model has a price."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

from pydantic_ai.models.test import TestModel

from pytest_llmjudge.compile.pairwise import PairwiseRequest
from pytest_llmjudge.compile.request import CompiledRequest
from pytest_llmjudge.cost.budget import Budget
from pytest_llmjudge.cost.pricing import Price
from pytest_llmjudge.cost.spending import Spending
from pytest_llmjudge.cost.usage import Usage
from pytest_llmjudge.execution.cache import VerdictCache
from pytest_llmjudge.execution.projection import judge_budget, sent_text_of
from pytest_llmjudge.judging.verdict import Verdict
from pytest_llmjudge.models.config import JudgeConfig
from pytest_llmjudge.suite.settings import RunSettings


def request(style: str = "no_reasoning", output: str = "Paris is the capital of France.") -> CompiledRequest:
    return CompiledRequest(
        "B1", "c1", "Judge the answer.", "Pass if it names Paris.", "Capital of France?", None, output, style
    )


def config(max_tokens: int | None = None, price: Price | None = None) -> JudgeConfig:
    settings = {} if max_tokens is None else {"max_tokens": max_tokens}
    return JudgeConfig(TestModel(), "test:judge", settings, price=price)  # type: ignore[arg-type]


def budgeted() -> Spending:
    return Spending(RunSettings(), limit=Budget(None, 1_000_000))


def high_input(text: str, chars_per_token: float = 4.0) -> int:
    tokens = math.ceil(len(text) / chars_per_token)
    return math.ceil(tokens + tokens * 0.2)


def test_a_run_without_a_budget_reserves_nothing() -> None:
    assert judge_budget(Spending(RunSettings()), request(), "B1", config(), None) is None


def test_a_call_reserves_its_request_and_the_styles_longest_answer() -> None:
    for style, answer in (("no_reasoning", 200), ("short_cot", 600), ("long_cot", 1600), ("other", 200)):
        sent = request(style)
        reserved = judge_budget(budgeted(), sent, "B1", config(), None)
        assert reserved is not None
        assert reserved.tokens == high_input(sent_text_of(sent)) + answer, style
        assert reserved.cost == 0  # no price: tokens only


def test_the_runs_max_tokens_caps_the_answer_and_a_price_costs_both() -> None:
    price = Price("test:judge", None, Decimal("2"), None, Decimal("8"), "--llmjudge-price")  # per Mtok
    sent = request()
    reserved = judge_budget(budgeted(), sent, "B1", config(max_tokens=50, price=price), None)
    assert reserved is not None
    tokens_in = high_input(sent_text_of(sent))
    assert reserved.tokens == tokens_in + 50
    assert reserved.cost == (Decimal(tokens_in) * 2 + 50 * 8) / 1_000_000


def test_the_sent_text_is_what_the_judge_is_sent() -> None:
    single = sent_text_of(request())
    assert "Pass if it names Paris." in single and "Paris is the capital of France." in single
    longer = sent_text_of(request(output="Paris is the capital of France, " * 20))
    assert len(longer) > len(single)
    pair = PairwiseRequest(
        "B1", "c1", "Compare.", "You compare two answers.", "Prefer Paris.", "Capital?", None,
        "Answer one.", "Answer two.", "candidate_first", "no_reasoning",
    )  # fmt: skip
    text = sent_text_of(pair)
    for part in ("Compare.", "You compare two answers.", "Prefer Paris.", "Answer one.", "Answer two."):
        assert part in text, part
    assert '"properties"' in text  # the verdict tool's schema
    assert not sent_text_of(pair.__class__(**{**pair.__dict__, "instructions": ""})).startswith("\n")


def test_the_caches_earlier_calls_set_the_ratio_and_the_answer_length(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "cache.sqlite")
    # this model's earlier calls: 3,000 characters in 1,000 tokens; answers of 40 and 90 tokens
    cache.put("k1", Verdict(True, "ok"), "test:judge", Usage(1, 400, 40, request_chars=1200), "B1", "c1")
    cache.put("k2", Verdict(True, "ok"), "test:judge", Usage(1, 600, 90, request_chars=1800), "B1", "c2")
    cache.put("k3", Verdict(True, "ok"), "test:judge", Usage(1, 10, 999), "B2", "c3")  # another benchmark
    cache.put("k4", Verdict(True, "ok"), "other:m", Usage(1, 10, 500, request_chars=10), "B1", "c4")
    sent = request()
    reserved = judge_budget(budgeted(), sent, "B1", config(), cache)
    assert reserved is not None
    assert reserved.tokens == high_input(sent_text_of(sent), chars_per_token=3.0) + 90
    cache.close()
