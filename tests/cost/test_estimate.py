"""The pre-run estimate: calls from the misses, input tokens by tokenizer / ratio / 4 characters,
output tokens from history or a default, the cost as genai-prices prices those counts."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from pytest_llmjudge.cost.pricing import Price, cost_of, price_for
from pytest_llmjudge.cost.tokens import DEFAULT_OUTPUT_TOKENS, ModelTokens, TokenRange
from pytest_llmjudge.gating.estimate import Miss, estimate_benchmark, estimate_calls

REQUEST = "Judge whether the answer is polite.\n<Output>\nThank you kindly.\n</Output>\n"  # 72 characters


def gpt_4o_mini() -> Price:
    price = price_for("openai:gpt-4o-mini", None, {})
    assert price is not None
    return price


def words(text: str) -> int:
    return len(text.split())


def test_a_tokenizer_counts_input_tokens_exactly() -> None:
    estimate = estimate_calls([Miss(REQUEST), Miss(REQUEST + " more")], ModelTokens(None, tokenizer=words))
    expected = words(REQUEST) + words(REQUEST + " more")
    assert estimate.input_tokens == TokenRange(expected, expected, expected)
    assert estimate.input_basis == "tokenizer"
    assert estimate.approximate == ("output tokens (default)",)


def test_without_a_tokenizer_the_models_own_ratio_counts_approximately() -> None:
    estimate = estimate_calls([Miss(REQUEST)], ModelTokens(None, chars_per_token=3.0))
    tokens = math.ceil(len(REQUEST) / 3.0)
    assert estimate.input_tokens == TokenRange(tokens, math.floor(tokens * 0.8), math.ceil(tokens * 1.2))
    assert estimate.approximate[0] == "input tokens (ratio of earlier calls)"


@pytest.mark.parametrize("ratio", [None, 0.0])
def test_with_nothing_known_four_characters_make_a_token(ratio: float | None) -> None:
    estimate = estimate_calls([Miss(REQUEST)], ModelTokens(None, chars_per_token=ratio))
    assert estimate.input_tokens.expected == math.ceil(len(REQUEST) / 4)
    assert estimate.input_basis == "4 characters a token"
    assert "input tokens (4 characters a token)" in estimate.approximate


def test_output_tokens_come_from_the_history() -> None:
    estimate = estimate_calls([Miss(REQUEST, samples=3)], ModelTokens(None, output_history=(40, 60, 200)))
    assert estimate.output_tokens == TokenRange(3 * 60, 3 * 40, 3 * 200)
    assert estimate.output_basis == "history"


def test_without_history_a_stated_default_with_a_range() -> None:
    estimate = estimate_calls([Miss(REQUEST)], ModelTokens(None))
    default = DEFAULT_OUTPUT_TOKENS
    assert estimate.output_tokens == TokenRange(default, default // 2, 2 * default)
    capped = estimate_calls([Miss(REQUEST)], ModelTokens(None, max_output_tokens=120))
    assert capped.output_tokens.high == 120  # no answer is longer than max_tokens


def test_calls_are_misses_times_samples_times_orders() -> None:
    estimate = estimate_calls(
        [Miss(REQUEST, samples=3), Miss(REQUEST, samples=1)], ModelTokens(None), orders=2
    )
    assert estimate.calls == (3 + 1) * 2
    with pytest.raises(ValueError, match="orders"):
        estimate_calls([Miss(REQUEST)], ModelTokens(None), orders=0)


def test_the_cost_is_genai_prices_price_of_each_call() -> None:
    price = gpt_4o_mini()
    model = ModelTokens(price, tokenizer=words, output_history=(50, 50, 80))
    estimate = estimate_calls([Miss(REQUEST, samples=2), Miss("a b c")], model)
    expected = 2 * cost_of(price, words(REQUEST), 0, 50) + cost_of(price, 3, 0, 50)
    assert estimate.cost == expected
    assert estimate.cost_low is not None and estimate.cost_high is not None
    assert estimate.cost_low <= expected < estimate.cost_high
    assert estimate.cost_high == 2 * cost_of(price, words(REQUEST), 0, 80) + cost_of(price, 3, 0, 80)


def test_a_tiered_price_is_priced_request_by_request() -> None:
    from genai_prices.data_snapshot import get_snapshot
    from genai_prices.types import TieredPrices

    found = [
        (provider.id, model.id, model.prices.input_mtok.tiers[0].start)
        for provider in get_snapshot().providers
        for model in provider.models
        if not isinstance(model.prices, list) and isinstance(model.prices.input_mtok, TieredPrices)
    ]
    if not found:
        pytest.skip("this genai-prices has no tiered model")
    provider, name, start = found[0]
    price = price_for(f"{provider}:{name}", None, {})
    assert price is not None and price.tiered
    small, large = "x " * (start // 2), "x " * (start + 10)
    estimate = estimate_calls(
        [Miss(small), Miss(large)], ModelTokens(price, tokenizer=words, output_history=(7,))
    )
    assert estimate.cost == cost_of(price, words(small), 0, 7) + cost_of(price, words(large), 0, 7)


def test_a_model_without_a_price_has_no_cost_but_counts_tokens() -> None:
    estimate = estimate_calls([Miss(REQUEST)], ModelTokens(None))
    assert estimate.cost is None and estimate.input_tokens.expected > 0


def test_a_benchmark_adds_its_task_calls_at_the_task_models_price() -> None:
    judge = ModelTokens(gpt_4o_mini(), tokenizer=words, output_history=(30,))
    task_price = Price("openai:tiny", None, Decimal(1), None, Decimal(2), "--llmjudge-price")
    task = ModelTokens(task_price, chars_per_token=4.0, output_history=(100,))
    result = estimate_benchmark(
        "REL-1", [Miss(REQUEST, samples=2)], judge, task_requests=["write a poem"], task=task
    )
    assert result.calls == 2 + 1
    assert result.task is not None and result.task.calls == 1
    assert result.cost == (result.judge.cost or 0) + (result.task.cost or 0)
    assert (
        result.cost_range is not None and result.cost_range[0] <= (result.cost or 0) <= result.cost_range[1]
    )
    text = result.describe()
    assert text.startswith("REL-1: 2 judge calls (1 misses, 2 samples, 1 order) + 1 task calls")
    assert "approximate: input tokens (ratio of earlier calls)" in text


def test_an_unpriced_model_makes_the_benchmark_cost_unknown() -> None:
    result = estimate_benchmark("B", [Miss(REQUEST)], ModelTokens(None))
    assert result.cost is None and result.cost_range is None
    assert "cost unknown" in result.describe()


def test_a_benchmark_with_nothing_to_call_costs_nothing() -> None:
    result = estimate_benchmark("B", [], ModelTokens(None))
    assert (result.calls, result.cost, result.cost_range) == (0, Decimal(0), (Decimal(0), Decimal(0)))


def test_task_requests_need_a_task_model() -> None:
    with pytest.raises(ValueError, match="no task model"):
        estimate_benchmark("B", [], ModelTokens(None), task_requests=["x"])


def test_the_total_line_sums_every_benchmark_and_its_cost_range() -> None:
    from pytest_llmjudge.cost.pricing import format_usd
    from pytest_llmjudge.gating.estimate import describe_total

    priced = ModelTokens(
        Price("m", None, Decimal(1000), None, Decimal(2000), "--llmjudge-price"), tokenizer=words
    )
    task = ModelTokens(
        Price("t", None, Decimal(1), None, Decimal(1), "--llmjudge-price"), output_history=(10,)
    )
    first = estimate_benchmark("A", [Miss(REQUEST, samples=2)], priced, task_requests=["x" * 40], task=task)
    second = estimate_benchmark("B", [Miss(REQUEST)], priced)
    both = [first, second]
    tokens_in = sum(p.input_tokens.expected for e in both for p in e.parts)
    tokens_out = sum(p.output_tokens.expected for e in both for p in e.parts)
    assert first.cost is not None and second.cost is not None
    assert first.cost_range is not None and second.cost_range is not None
    low, high = (first.cost_range[i] + second.cost_range[i] for i in (0, 1))
    assert describe_total(both) == (
        f"total: 4 calls, {tokens_in:,} in / {tokens_out:,} out tokens, "
        f"{format_usd(first.cost + second.cost)} ({format_usd(low)}–{format_usd(high)})"
    )
    assert low < first.cost + second.cost < high and first.calls == 3
    unpriced = estimate_benchmark("C", [Miss(REQUEST)], ModelTokens(None))
    assert describe_total([first, unpriced]).endswith(", cost unknown (a model has no price)")
    assert describe_total([]) == "total: 0 calls, 0 in / 0 out tokens, $0.00 ($0.00–$0.00)"
