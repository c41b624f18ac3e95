"""What a run will cost before it runs: calls, tokens and USD per benchmark, from the cache misses.

Tokens are counted from the exact requests the misses would send (``cost.tokens``: a
tokenizer, this model's characters per token, or 4 characters a token; output from the history
of the benchmark's verdicts or a stated default), and costs are genai-prices' calculation for
those counts (``cost.pricing.cost_of``). Pure: no model call, no file, no network.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from ..cost.pricing import Price, cost_of, format_usd
from ..cost.tokens import InputBasis, ModelTokens, OutputBasis, TokenRange, input_counter, output_range


@dataclass(frozen=True)
class Miss:
    """A request the cache cannot answer: its exact text, and how many of its samples (repeats)
    are missing."""

    request: str
    samples: int = 1


@dataclass(frozen=True)
class Estimate:
    """The calls one model will make, their tokens, and their cost (None: the model has no price).
    Each figure has a low–high range; ``input_basis`` and ``output_basis`` say where it comes from."""

    calls: int
    input_tokens: TokenRange
    output_tokens: TokenRange
    cost: Decimal | None
    cost_low: Decimal | None
    cost_high: Decimal | None
    input_basis: InputBasis
    output_basis: OutputBasis

    @property
    def approximate(self) -> tuple[str, ...]:
        """The parts that are a guess rather than a count or a measured history."""
        parts = []
        if self.input_basis != "tokenizer":
            parts.append(f"input tokens ({self.input_basis})")
        if self.output_basis == "default":
            parts.append("output tokens (default)")
        return tuple(parts)


def estimate_calls(requests: Sequence[Miss], model: ModelTokens, orders: int = 1) -> Estimate:
    """The estimate for ``requests``, each sent ``samples × orders`` times (pairwise orders: the
    swapped order has the same text with the answers exchanged, so the same tokens)."""
    if orders < 1:
        raise ValueError(f"pairwise orders must be 1 or 2, not {orders}")
    count, input_basis = input_counter(model)
    output, output_basis = output_range(model)
    calls = [(count(miss.request), miss.samples * orders) for miss in requests]
    total_calls = sum(n for _, n in calls)
    tokens_in = TokenRange(
        sum(t.expected * n for t, n in calls),
        sum(t.low * n for t, n in calls),
        sum(t.high * n for t, n in calls),
    )
    cost = cost_low = cost_high = None
    if model.price is not None:
        cost = _cost(model.price, [(t.expected, output.expected, n) for t, n in calls])
        cost_low = _cost(model.price, [(t.low, output.low, n) for t, n in calls])
        cost_high = _cost(model.price, [(t.high, output.high, n) for t, n in calls])
    return Estimate(
        total_calls,
        tokens_in,
        output.times(total_calls),
        cost,
        cost_low,
        cost_high,
        input_basis,
        output_basis,
    )


def _cost(price: Price, calls: Sequence[tuple[int, int, int]]) -> Decimal:
    """USD of ``(input tokens, output tokens, number of calls)`` groups, each call one request.

    A price without tiers is linear in the counts plus a fixed part per request, so genai-prices
    is asked once for the totals and once for a request's fixed part (it takes about 0.2 ms a
    call); a tiered price is asked for each distinct request, whose tier depends on its own size.
    """
    if not calls:
        return Decimal(0)
    if not price.tiered:
        total_calls = sum(n for _, _, n in calls)
        total_in = sum(i * n for i, _, n in calls)
        total_out = sum(o * n for _, o, n in calls)
        return cost_of(price, total_in, 0, total_out) + cost_of(price, 0, 0, 0) * (total_calls - 1)
    per_request: dict[tuple[int, int], Decimal] = {}
    total = Decimal(0)
    for tokens_in, tokens_out, n in calls:
        key = (tokens_in, tokens_out)
        if key not in per_request:
            per_request[key] = cost_of(price, tokens_in, 0, tokens_out)
        total += per_request[key] * n
    return total


@dataclass(frozen=True)
class BenchmarkEstimate:
    """One benchmark's estimate: the judge's calls and, with a model task, the task's."""

    benchmark: str
    misses: int  # requests the cache cannot answer
    samples: int  # their samples (repeats) to judge
    orders: int  # pairwise orders per sample
    judge: Estimate
    task: Estimate | None = None

    @property
    def parts(self) -> tuple[Estimate, ...]:
        return (self.judge,) if self.task is None else (self.judge, self.task)

    @property
    def calls(self) -> int:
        return sum(part.calls for part in self.parts)

    def _sum(self, pick: Callable[[Estimate], Decimal | None]) -> Decimal | None:
        amounts = [pick(part) for part in self.parts if part.calls]
        if any(amount is None for amount in amounts):
            return None
        return sum((amount for amount in amounts if amount is not None), Decimal(0))

    @property
    def cost(self) -> Decimal | None:
        """USD in all; None when a model that will be called has no price."""
        return self._sum(lambda part: part.cost)

    @property
    def cost_range(self) -> tuple[Decimal, Decimal] | None:
        low, high = self._sum(lambda part: part.cost_low), self._sum(lambda part: part.cost_high)
        return None if low is None or high is None else (low, high)

    def describe(self) -> str:
        """``B: 4 judge calls (2 misses, 4 samples, 1 order) + 2 task calls, 1,200 in / 500 out
        tokens, $0.00021 ($0.00017–$0.00026); approximate: input tokens (4 characters a token)``."""
        orders = f"{self.orders} order{'s' if self.orders > 1 else ''}"
        text = (
            f"{self.benchmark}: {self.judge.calls} judge calls "
            f"({self.misses} misses, {self.samples} samples, {orders})"
        )
        if self.task is not None and self.task.calls:
            text += f" + {self.task.calls} task calls"
        tokens_in = sum(part.input_tokens.expected for part in self.parts)
        tokens_out = sum(part.output_tokens.expected for part in self.parts)
        text += f", {tokens_in:,} in / {tokens_out:,} out tokens"
        cost, spread = self.cost, self.cost_range
        if cost is None or spread is None:
            text += ", cost unknown (a model has no price)"
        else:
            text += f", {format_usd(cost)} ({format_usd(spread[0])}–{format_usd(spread[1])})"
        guesses = sorted({guess for part in self.parts if part.calls for guess in part.approximate})
        if guesses:
            text += f"; approximate: {', '.join(guesses)}"
        return text


def estimate_benchmark(
    benchmark: str,
    misses: Sequence[Miss],
    judge: ModelTokens,
    *,
    orders: int = 1,
    task_requests: Sequence[str] = (),
    task: ModelTokens | None = None,
) -> BenchmarkEstimate:
    """The estimate of one benchmark: ``misses`` judged ``samples × orders`` times each by the
    judge, and each of ``task_requests`` (model-task requests whose output is not cached; a
    case's samples share its output) sent once to the task model."""
    if task_requests and task is None:
        raise ValueError(f"{benchmark}: task requests to estimate but no task model")
    task_estimate = None
    if task is not None:
        task_estimate = estimate_calls([Miss(text) for text in task_requests], task)
    return BenchmarkEstimate(
        benchmark,
        len(misses),
        sum(miss.samples for miss in misses),
        orders,
        estimate_calls(misses, judge, orders),
        task_estimate,
    )


def describe_total(estimates: Sequence[BenchmarkEstimate]) -> str:
    """``total: 14 calls, 9,800 in / 1,400 out tokens, $0.0024 ($0.0019–$0.0032)``: the run's
    estimate, summed over its benchmarks."""
    calls = sum(estimate.calls for estimate in estimates)
    parts = [part for estimate in estimates for part in estimate.parts]
    tokens_in = sum(part.input_tokens.expected for part in parts)
    tokens_out = sum(part.output_tokens.expected for part in parts)
    text = f"total: {calls} calls, {tokens_in:,} in / {tokens_out:,} out tokens"
    costs = [estimate.cost for estimate in estimates]
    ranges = [estimate.cost_range for estimate in estimates]
    if any(cost is None for cost in costs) or any(spread is None for spread in ranges):
        return text + ", cost unknown (a model has no price)"
    cost = sum((c for c in costs if c is not None), Decimal(0))
    low = sum((r[0] for r in ranges if r is not None), Decimal(0))
    high = sum((r[1] for r in ranges if r is not None), Decimal(0))
    return text + f", {format_usd(cost)} ({format_usd(low)}–{format_usd(high)})"
