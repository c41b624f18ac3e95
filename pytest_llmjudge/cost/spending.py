"""What a run spends: the price of each model it calls, and the budget every call start asks.

One ``Spending`` per judging service. It prices models (``--llmjudge-price`` overrides first,
``cost.pricing``), opens the run's spending limit (a ``Budget``; an xdist controller's served to
its workers by a ``BudgetBroker``; a worker's ``BudgetClient``), and gives each call a
``CallBudget``: the projected cost and tokens it reserves before it starts and settles when it
ends. Knows nothing of pytest.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from .budget import WAIT, Reservation, SpendLimit, check_priced
from .pricing import Price, RequestTokens, cost_of_requests, parse_price_option, price_for
from .usage import Usage

if TYPE_CHECKING:
    from ..suite.settings import RunSettings
    from .tokens import ModelTokens

Role = Literal["single", "controller", "worker"]

# Output tokens of one call before any history exists, per prompt style: a {pass, reason} verdict,
# or a reasoning block before it (the estimate says these are defaults).
DEFAULT_OUTPUT_TOKENS = {"no_reasoning": 100, "short_cot": 300, "long_cot": 800}
DEFAULT_TASK_OUTPUT_TOKENS = 500  # a model task's answer, before any history exists
BUDGET_KIND = "budget"  # the failure kind of a judge call the budget did not let start
TASK_BUDGET_KIND = "task-budget"  # the same for a task call
BUDGET_KINDS = frozenset({BUDGET_KIND, TASK_BUDGET_KIND})
ADMIT_POLL = 0.02  # seconds between asking again while calls in flight hold the room a call needs


def price_overrides(specs: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``--llmjudge-price MODEL=IN/OUT`` values by model; raises ``ValueError`` naming a bad one."""
    overrides: dict[str, tuple[float, float]] = {}
    for spec in specs:
        model, price_in, price_out = parse_price_option(spec)
        overrides[model] = (price_in, price_out)
    return overrides


def priced_usage(
    price: Price | None, responses: Iterable[object], requests: int | None = None, request_chars: int = 0
) -> Usage:
    """The usage of a call's model responses (pydantic-ai ``ModelResponse`` objects, or their
    ``RequestUsage``), each response priced on its own. ``cost`` is None without a price, or when
    genai-prices cannot price the usage: a price that fails never fails a verdict.

    A response that reports no usage (none, zero or negative counts) has used tokens all the same:
    they are estimated, ``CHARS_PER_TOKEN`` characters a token, from ``request_chars`` and the
    characters of its answer (``Usage.estimated`` counts them). A response that reports more
    tokens than any model's context holds (``IMPLAUSIBLE_TOKENS``) is counted as reported, the
    direction in which a budget still holds, and ``Usage.implausible`` says so."""
    counted = [_tokens(response, request_chars) for response in responses]
    tokens = [t for t, _ in counted]
    cost: Decimal | None = None
    if price is not None:
        try:
            cost = cost_of_requests(price, tokens)
        except (ValueError, LookupError):
            cost = None
    return Usage(
        len(counted) if requests is None else requests,
        sum(t.input_tokens for t in tokens),
        sum(t.output_tokens for t in tokens),
        sum(t.cached_input_tokens for t in tokens),
        cost,
        request_chars,
        estimated=sum(1 for _, said in counted if said == "estimated"),
        implausible=sum(1 for _, said in counted if said == "implausible"),
    )


CHARS_PER_TOKEN = 4  # what an unreported usage is estimated at, as the estimate's default does
IMPLAUSIBLE_TOKENS = 10_000_000  # in one response: more than any model's context window holds


def _tokens(response: object, request_chars: int) -> tuple[RequestTokens, str]:
    """One response's tokens, and whether they are as ``reported``, ``estimated`` or
    ``implausible`` (reported, and more than any context holds)."""
    parts = getattr(response, "parts", None)
    usage = getattr(response, "usage", None) if parts is not None else response

    def count(name: str) -> int:
        value = getattr(usage, name, 0)
        return value if isinstance(value, int) and value > 0 else 0

    details = getattr(response, "provider_details", None)
    batch = isinstance(details, dict) and details.get("processing") == "batch"  # priced at the batch rate
    tokens_in, tokens_out = count("input_tokens"), count("output_tokens")
    if not tokens_in and not tokens_out:  # nothing reported: the call used tokens all the same
        answer = answer_chars(parts or ())
        chars_in, chars_out = -(-request_chars // CHARS_PER_TOKEN), -(-answer // CHARS_PER_TOKEN)
        estimate = RequestTokens(chars_in, 0, chars_out, batch=batch)
        return estimate, "estimated"
    cached = min(count("cache_read_tokens"), tokens_in)
    written = min(count("cache_write_tokens"), tokens_in - cached)
    said = "implausible" if max(tokens_in, tokens_out) > IMPLAUSIBLE_TOKENS else "reported"
    return RequestTokens(tokens_in, cached, tokens_out, written, batch), said


def answer_chars(parts: Iterable[object]) -> int:
    """Characters of a response's answer: its text and thinking, and its tool calls' arguments."""
    chars = 0
    for part in parts:
        content = getattr(part, "content", None)
        args = getattr(part, "args", None)
        if isinstance(content, str):
            chars += len(content)
        if isinstance(args, str):
            chars += len(args)
        elif isinstance(args, dict):
            chars += len(json.dumps(args, ensure_ascii=False, default=str))
    return chars


def saved_cost(price: Price | None, input_tokens: int, output_tokens: int) -> Decimal | None:
    """What a cache hit saved: its stored tokens at today's price (None without a price)."""
    if price is None:
        return None
    try:
        return cost_of_requests(price, [RequestTokens(input_tokens, 0, output_tokens)])
    except (ValueError, LookupError):
        return None


@dataclass(frozen=True)
class CallBudget:
    """What one call reserves in the run's budget before it starts: its projected cost and tokens."""

    limit: SpendLimit
    cost: Decimal
    tokens: int
    kind: str = BUDGET_KIND

    async def admit(self) -> Reservation | None:
        """Room for the call, once the calls in flight leave it; None: the budget is reached and
        the call must not start."""
        while (admission := self.limit.reserve(self.cost, self.tokens)) == WAIT:
            await asyncio.sleep(ADMIT_POLL)
        return admission if isinstance(admission, Reservation) else None

    def settle(self, reservation: Reservation, usage: Usage | None) -> None:
        """End the call: what it used, or its projection when that is not known (a request that
        timed out may still be billed)."""
        if usage is None:
            self.limit.settle(reservation, self.cost, self.tokens)
            return
        cost = usage.cost if usage.cost is not None else Decimal(0)  # a token budget's unpriced call
        tokens = usage.input_tokens + usage.output_tokens
        if usage.estimated and not usage.request_chars:  # no usage, and no request text to count
            cost, tokens = max(cost, self.cost), max(tokens, self.tokens)
        self.limit.settle(reservation, cost, tokens)

    def refusal(self) -> str:
        """Why the budget did not let a call start: ``budget reached: spent $X of $Y``."""
        return self.limit.message()


@dataclass(eq=False)
class Spending:
    """The prices and the budget of one run."""

    settings: RunSettings
    limit: SpendLimit | None = None
    _overrides: dict[str, tuple[float, float]] | None = None
    _tokens: dict[tuple[str, str], ModelTokens] = field(default_factory=dict)
    _close: Callable[[], None] | None = None

    @property
    def overrides(self) -> dict[str, tuple[float, float]]:
        if self._overrides is None:
            self._overrides = price_overrides(self.settings.price)
        return self._overrides

    @property
    def usd_budget(self) -> bool:
        return self.settings.budget is not None

    def price(self, label: str, base_url: str | None = None) -> Price | None:
        """The price of a model's tokens (``cost.pricing.price_for``), None if unknown."""
        return price_for(label, base_url, self.overrides)

    def unpriced_message(self, models: Mapping[str, Price | None]) -> str | None:
        """Under a USD budget, why the run cannot start: a model it would call has no price."""
        return check_priced(models) if self.usd_budget else None

    def open(self, role: Role, environ: MutableMapping[str, str] | None = None) -> None:
        """Open the run's spending limit (nothing without a budget): this process's own, an xdist
        controller's served to its workers, or a worker's connection to the controller's."""
        settings = self.settings
        if settings.budget is None and settings.budget_tokens is None:
            return
        from .budget import Budget
        from .budget_broker import BUDGET_BROKER_ENV, BudgetBroker, BudgetClient

        environ = os.environ if environ is None else environ
        if role == "worker" and BUDGET_BROKER_ENV in environ:
            client = BudgetClient(environ[BUDGET_BROKER_ENV])
            self.limit, self._close = client, client.close
            return
        budget = Budget(settings.budget, settings.budget_tokens)
        self.limit = budget
        if role == "controller":
            broker = BudgetBroker(budget)
            broker.export(environ)
            self._close = broker.close

    def model_tokens(
        self,
        benchmark: str,
        label: str,
        price: Price | None,
        *,
        default_output: int,
        max_tokens: int | None,
        calls: Callable[[], Iterable[tuple[int, int]]] = tuple,
        outputs: Callable[[], Iterable[int]] = tuple,
    ) -> ModelTokens:
        """What is known of a model's tokens for one benchmark before calling it: its tokenizer,
        its characters per token in earlier ``calls`` (request characters, input tokens) and the
        output tokens of this benchmark's earlier calls (``outputs``); looked up once."""
        key = (benchmark, label)
        if key not in self._tokens:
            from .tokens import ModelTokens, chars_per_token, tokenizer_for

            self._tokens[key] = ModelTokens(
                price,
                tokenizer_for(label),
                chars_per_token(calls()),
                tuple(outputs()),
                default_output,
                max_tokens,
            )
        return self._tokens[key]

    def call_budget(
        self, tokens: ModelTokens, request_text: str, kind: str = BUDGET_KIND
    ) -> CallBudget | None:
        """The reservation of one call of ``request_text``; None without a budget."""
        if self.limit is None:
            return None
        from .tokens import projected_call

        cost, count = projected_call(request_text, tokens)
        return CallBudget(self.limit, cost, count, kind)

    def overspent(self) -> str | None:
        """``over budget: spent $X of $Y`` when the run's calls spent past its budget (calls in
        flight, or usage above their projection); None without a budget, or within it. Asked of
        the process that holds the budget (an xdist controller holds its workers')."""
        from .budget import Budget

        return self.limit.overspent() if isinstance(self.limit, Budget) else None

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None
