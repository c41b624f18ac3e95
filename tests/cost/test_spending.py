"""A run's spending without a run: the tokens and price of each model response (reported,
estimated from characters, implausible, cached, batch), what a cache hit saved, the budget a call
reserves and settles, and the run's ``Spending`` (price overrides, the limit each xdist role
opens, one token profile per benchmark and model)."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
from collections.abc import Iterable
from decimal import Decimal
from typing import Literal

import pytest

from pytest_llmjudge.cost import spending
from pytest_llmjudge.cost.budget import WAIT, Budget, Reservation
from pytest_llmjudge.cost.budget_broker import (
    BUDGET_BROKER_ENV,
    BudgetBroker,
    BudgetBrokerError,
    BudgetClient,
)
from pytest_llmjudge.cost.pricing import Price, RequestTokens, cost_of, price_for
from pytest_llmjudge.cost.spending import (
    ADMIT_POLL,
    BUDGET_KIND,
    TASK_BUDGET_KIND,
    CallBudget,
    Spending,
    answer_chars,
    price_overrides,
    priced_usage,
    saved_cost,
)
from pytest_llmjudge.cost.tokens import ModelTokens, projected_call
from pytest_llmjudge.cost.usage import Usage, total_usage
from pytest_llmjudge.suite.settings import RunSettings


def _price(label: str) -> Price:
    price = price_for(label)
    assert price is not None
    return price


MINI = "openai:gpt-4o-mini"  # $0.15 / $0.6 per Mtok, cached input $0.075


class Counts:
    """A pydantic-ai ``RequestUsage``: token counts only."""

    def __init__(self, **counts: object) -> None:
        for name, value in counts.items():
            setattr(self, name, value)


class Part:
    def __init__(self, content: object = None, args: object = None) -> None:
        self.content, self.args = content, args


class Response:
    """A pydantic-ai ``ModelResponse``: parts, usage and provider details."""

    def __init__(self, usage: Counts, parts: Iterable[Part] = (), details: object = None) -> None:
        self.parts, self.usage, self.provider_details = list(parts), usage, details


# -- one response's tokens ----------------------------------------------------------------------


def test_a_reported_response_is_counted_and_priced_as_reported() -> None:
    price = _price(MINI)
    response = Response(Counts(input_tokens=1000, output_tokens=100), [Part("ignored: usage is reported")])
    usage = priced_usage(price, [response], request_chars=9999)
    assert (usage.requests, usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (
        1,
        1000,
        0 + 100,
        0,
    )
    assert usage.cost == Decimal("0.00021")  # 1000 × $0.15 + 100 × $0.6 per million
    assert (usage.estimated, usage.implausible, usage.request_chars) == (0, 0, 9999)


def test_only_input_or_only_output_reported_is_still_reported() -> None:
    usage = priced_usage(None, [Counts(input_tokens=7), Counts(output_tokens=5)], request_chars=400)
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (7, 5, 0)
    assert usage.cost is None and usage.spent is None  # tokens, and no price for them


def test_a_response_without_usage_is_estimated_at_four_characters_a_token() -> None:
    price = _price(MINI)
    answer = [Part("x" * 9), Part(args="y" * 4)]  # 13 characters: 4 tokens, rounded up
    usage = priced_usage(
        price, [Response(Counts(input_tokens=0, output_tokens=0), answer)], request_chars=401
    )
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (101, 4, 0)
    assert usage.estimated == 1 and usage.implausible == 0
    assert usage.cost == cost_of(price, 101, 0, 4)
    exact = priced_usage(price, [Response(Counts(), [Part("x" * 8)])], request_chars=400)
    assert (exact.input_tokens, exact.output_tokens) == (100, 2)  # exact multiples are not rounded up


def test_counts_that_are_not_positive_whole_numbers_count_as_not_reported() -> None:
    odd = Counts(input_tokens=-5, output_tokens="12", cache_read_tokens=None)
    usage = priced_usage(None, [odd], request_chars=8)
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (2, 0, 1)
    one = priced_usage(None, [Counts(input_tokens=1, output_tokens=1)])
    assert (one.input_tokens, one.output_tokens, one.estimated) == (1, 1, 0)  # one token is reported


def test_a_response_without_parts_is_its_own_usage() -> None:
    usage = priced_usage(None, [Counts(input_tokens=3, output_tokens=2, cache_read_tokens=1)])
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (3, 2, 1)


def test_cached_and_cache_write_tokens_are_priced_at_their_rates() -> None:
    price = _price(MINI)
    usage = priced_usage(
        price, [Response(Counts(input_tokens=1000, cache_read_tokens=600, output_tokens=50))]
    )
    assert usage.cached_input_tokens == 600
    assert usage.cost == cost_of(price, 1000, 600, 50) < cost_of(price, 1000, 0, 50)
    sonnet = _price("anthropic:claude-sonnet-4-5")  # writing the prompt cache costs more than input
    written = priced_usage(sonnet, [Counts(input_tokens=1000, cache_write_tokens=400, output_tokens=0)])
    assert written.cost == cost_of(sonnet, 1000, 0, 0, cache_write_tokens=400) > cost_of(sonnet, 1000, 0, 0)


def test_cached_tokens_never_pass_the_input_tokens() -> None:
    sonnet = _price("anthropic:claude-sonnet-4-5")
    tokens = [Counts(input_tokens=100, cache_read_tokens=150, cache_write_tokens=30, output_tokens=1)]
    usage = priced_usage(sonnet, tokens)
    assert usage.cached_input_tokens == 100  # a provider's overcount is cut to the input
    assert usage.cost == cost_of(sonnet, 100, 100, 1)  # and nothing left over was written
    partly = priced_usage(sonnet, [Counts(input_tokens=100, cache_read_tokens=60, cache_write_tokens=70)])
    assert partly.cost == cost_of(sonnet, 100, 60, 0, cache_write_tokens=40)


def test_a_batch_response_is_priced_at_the_batch_rate() -> None:
    price = _price(MINI)
    batch = {"processing": "batch"}
    usage = priced_usage(price, [Response(Counts(input_tokens=1000, output_tokens=100), details=batch)])
    assert usage.cost == Decimal("0.000105")  # half of $0.00021
    estimated = priced_usage(
        price, [Response(Counts(), [Part("z" * 400)], details=batch)], request_chars=4000
    )
    assert estimated.cost == cost_of(price, 1000, 0, 100, batch=True)
    for details in ({"processing": "sync"}, "batch", None):
        plain = priced_usage(price, [Response(Counts(input_tokens=1000, output_tokens=100), details=details)])
        assert plain.cost == Decimal("0.00021")


def test_a_response_past_any_context_is_counted_as_reported_and_said_implausible() -> None:
    huge = spending.IMPLAUSIBLE_TOKENS + 1
    usage = priced_usage(
        None, [Counts(input_tokens=huge, output_tokens=1), Counts(input_tokens=1, output_tokens=huge)]
    )
    assert (usage.input_tokens, usage.output_tokens, usage.implausible, usage.estimated) == (
        huge + 1,
        huge + 1,
        2,
        0,
    )
    at_most = priced_usage(None, [Counts(input_tokens=spending.IMPLAUSIBLE_TOKENS, output_tokens=1)])
    assert at_most.implausible == 0


def test_several_responses_are_summed_and_the_requests_can_be_given() -> None:
    price = _price(MINI)
    responses = [Counts(input_tokens=10, output_tokens=1), Counts(), Counts(input_tokens=5, output_tokens=2)]
    usage = priced_usage(price, responses, request_chars=40)
    assert (usage.requests, usage.input_tokens, usage.output_tokens, usage.estimated) == (3, 25, 3, 1)
    assert usage.cost == cost_of(price, 10, 0, 1) + cost_of(price, 10, 0, 0) + cost_of(price, 5, 0, 2)
    assert priced_usage(price, responses, requests=1).requests == 1
    assert priced_usage(price, []).requests == 0 and priced_usage(price, []).cost == 0


def test_a_price_genai_prices_cannot_apply_leaves_the_cost_unknown() -> None:
    gone = dataclasses.replace(_price(MINI), model_ref="no-such-model")
    usage = priced_usage(gone, [Counts(input_tokens=10, output_tokens=1)])
    assert usage.cost is None and usage.input_tokens == 10
    assert saved_cost(gone, 10, 1) is None


def test_an_answer_counts_its_text_and_its_tool_arguments() -> None:
    parts = [
        Part("abc"),
        Part(args="de"),
        Part(content="f", args={"reason": "é"}),  # {"reason": "é"}: 15 characters, é as itself
        Part(args={"when": Decimal("1.5")}),  # {"when": "1.5"}: 15, by its text
        Part(content=42, args=7),
    ]
    assert answer_chars(parts) == 3 + 2 + 1 + 15 + 15
    assert answer_chars([]) == 0


# -- what a cache hit saved ----------------------------------------------------------------------


def test_a_cache_hit_saved_its_stored_tokens_at_todays_price() -> None:
    price = _price(MINI)
    assert saved_cost(price, 1000, 100) == Decimal("0.00021")
    assert saved_cost(None, 1000, 100) is None
    assert saved_cost(price, -1, 100) is None  # impossible stored counts: nothing claimed


# -- usage sums -----------------------------------------------------------------------------------


def test_two_usages_add_every_count() -> None:
    first = Usage(1, 100, 10, 40, Decimal("0.5"), 0, estimated=1, implausible=0)
    second = Usage(2, 200, 20, 60, Decimal("0.25"), 800, estimated=2, implausible=3)
    assert first.plus(second) == Usage(3, 300, 30, 100, Decimal("0.75"), 800, estimated=3, implausible=3)
    assert second.plus(first).request_chars == 800  # the known request size, whichever side
    assert Usage(request_chars=5).plus(Usage(request_chars=9)).request_chars == 5


def test_a_sum_without_any_price_stays_unpriced_and_free_calls_stay_free() -> None:
    assert Usage(1, 5, 5).plus(Usage(1, 5, 5)).cost is None
    assert Usage(1, 5, 5, cost=Decimal(1)).plus(Usage()).cost == Decimal(1)
    assert Usage().plus(Usage(1, 5, 5, cost=Decimal(2))).cost == Decimal(2)
    assert Usage(1, 5, 5, cost=Decimal(1)).plus(Usage(1, 5, 5)).cost is None
    assert Usage(0, 3, 0).spent is None and Usage(0, 0, 3).spent is None and Usage(1).spent is None
    assert total_usage([Usage(1, 1, 1, cost=Decimal(1))] * 3).cost == Decimal(3)


# -- one call's budget ----------------------------------------------------------------------------


class Limit:
    """A spend limit that answers ``reserve`` from a script and records what is settled."""

    def __init__(self, answers: list[Reservation | Literal["wait"] | None]) -> None:
        self.answers = answers
        self.asked: list[tuple[Decimal, int]] = []
        self.settled: list[tuple[Reservation, Decimal, int]] = []

    def reserve(self, projected_cost: Decimal, projected_tokens: int) -> Reservation | Literal["wait"] | None:
        self.asked.append((projected_cost, projected_tokens))
        return self.answers.pop(0)

    def settle(self, reservation: Reservation, actual_cost: Decimal, actual_tokens: int) -> None:
        self.settled.append((reservation, actual_cost, actual_tokens))

    def message(self) -> str:
        return "budget reached: spent $1.00 of $1.00"


RESERVED = Reservation(1, Decimal("0.01"), 500)


def test_a_call_waits_for_the_calls_in_flight_then_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    limit = Limit([WAIT, WAIT, RESERVED])
    budget = CallBudget(limit, Decimal("0.01"), 500)
    assert asyncio.run(budget.admit()) == RESERVED
    assert limit.asked == [(Decimal("0.01"), 500)] * 3 and slept == [ADMIT_POLL, ADMIT_POLL]


def test_a_refused_call_is_not_admitted_and_says_why() -> None:
    limit = Limit([None])
    budget = CallBudget(limit, Decimal("0.01"), 500, TASK_BUDGET_KIND)
    assert asyncio.run(budget.admit()) is None
    assert budget.refusal() == "budget reached: spent $1.00 of $1.00"
    assert CallBudget(limit, Decimal(0), 0).kind == BUDGET_KIND == "budget"


def test_a_call_settles_with_what_it_used() -> None:
    limit = Limit([])
    budget = CallBudget(limit, Decimal("0.01"), 500)
    budget.settle(RESERVED, Usage(1, 300, 40, cost=Decimal("0.002"), request_chars=1200))
    budget.settle(RESERVED, Usage(1, 300, 40, cost=None, request_chars=1200))  # a token budget's call
    budget.settle(RESERVED, None)  # nothing known of the call: its projection
    assert limit.settled == [
        (RESERVED, Decimal("0.002"), 340),
        (RESERVED, Decimal(0), 340),
        (RESERVED, Decimal("0.01"), 500),
    ]


def test_an_estimated_call_without_its_request_settles_at_least_its_projection() -> None:
    limit = Limit([])
    budget = CallBudget(limit, Decimal("0.01"), 500)
    budget.settle(RESERVED, Usage(1, 0, 20, cost=Decimal("0.001"), estimated=1))
    budget.settle(RESERVED, Usage(1, 900, 20, cost=Decimal("0.5"), estimated=1))
    budget.settle(RESERVED, Usage(1, 100, 20, cost=Decimal("0.001"), request_chars=400, estimated=1))
    assert limit.settled == [
        (RESERVED, Decimal("0.01"), 500),  # the projection, higher than the estimate
        (RESERVED, Decimal("0.5"), 920),  # the estimate, higher than the projection
        (RESERVED, Decimal("0.001"), 120),  # estimated from the request text: as estimated
    ]


def test_call_budgets_hold_a_real_budget_to_its_limit() -> None:
    limit = Budget(Decimal("0.025"), 1000)
    budget = CallBudget(limit, Decimal("0.01"), 400)
    first = asyncio.run(budget.admit())
    assert isinstance(first, Reservation)
    budget.settle(first, Usage(1, 500, 100, cost=Decimal("0.02")))
    assert (limit.spent, limit.spent_tokens) == (Decimal("0.02"), 600)
    assert asyncio.run(budget.admit()) is None  # $0.02 spent + $0.01 projected passes $0.025
    assert budget.refusal() == "budget reached: spent $0.02 of $0.025"


# -- the run's spending ---------------------------------------------------------------------------


def test_price_options_become_overrides_by_model() -> None:
    assert price_overrides(["openai:m=0.15/0.6", "llama=0/0"]) == {
        "openai:m": (0.15, 0.6),
        "llama": (0.0, 0.0),
    }
    assert price_overrides([]) == {}
    with pytest.raises(ValueError, match="--llmjudge-price 'bad'"):
        price_overrides(["ok=1/1", "bad"])


def test_the_run_prices_models_with_its_overrides_first() -> None:
    run = Spending(RunSettings(price=("openai:gpt-4o-mini=1/2", "mine=3/4")))
    assert run.overrides == {"openai:gpt-4o-mini": (1.0, 2.0), "mine": (3.0, 4.0)}
    assert run.overrides is run.overrides  # read once
    mini = run.price(MINI)
    assert mini is not None and (mini.input_mtok, mini.output_mtok, mini.source) == (
        Decimal(1),
        Decimal(2),
        "--llmjudge-price",
    )
    served = run.price("openai:mine", "http://localhost:8000/v1")
    assert served is not None and (served.input_mtok, served.output_mtok) == (Decimal(3), Decimal(4))
    assert run.price("openai:unknown-model", "http://localhost:8000/v1") is None
    resold = run.price("openai:openai/gpt-4o-mini", "https://openrouter.ai/api/v1")
    assert resold is not None and resold.provider == "openrouter"  # priced by the server it is sent to
    assert Spending(RunSettings()).price(MINI) == _price(MINI)


def test_under_a_usd_budget_an_unpriced_model_stops_the_run() -> None:
    models = {MINI: _price(MINI), "openai:mystery": None}
    message = Spending(RunSettings(budget=1.0)).unpriced_message(models)
    assert message is not None and "no price is known for openai:mystery" in message
    assert Spending(RunSettings(budget_tokens=1000)).unpriced_message(models) is None
    assert Spending(RunSettings()).unpriced_message(models) is None
    assert Spending(RunSettings(budget=0.0)).usd_budget  # a budget of $0 is a budget


def test_without_a_budget_no_limit_opens_and_no_call_reserves() -> None:
    run = Spending(RunSettings())
    environ: dict[str, str] = {}
    run.open("controller", environ)
    assert run.limit is None and environ == {}
    assert run.call_budget(ModelTokens(None), "text") is None
    assert run.overspent() is None
    run.close()


@pytest.mark.parametrize(
    ("settings", "usd", "tokens"),
    [(RunSettings(budget=2.5), Decimal("2.5"), None), (RunSettings(budget_tokens=900), None, 900)],
)
def test_a_single_process_opens_its_own_budget(
    settings: RunSettings, usd: Decimal | None, tokens: int | None
) -> None:
    run = Spending(settings)
    environ = {BUDGET_BROKER_ENV: "stale@127.0.0.1:1"}  # not a worker: its own budget all the same
    run.open("single", environ)
    assert isinstance(run.limit, Budget)
    assert (run.limit.limit_usd, run.limit.limit_tokens) == (usd, tokens)
    assert environ == {BUDGET_BROKER_ENV: "stale@127.0.0.1:1"}
    run.close()


def test_a_controller_serves_its_budget_to_the_workers() -> None:
    controller = Spending(RunSettings(budget=1.0, budget_tokens=1000))
    environ: dict[str, str] = {}
    controller.open("controller", environ)
    try:
        assert isinstance(controller.limit, Budget) and BUDGET_BROKER_ENV in environ
        address = environ[BUDGET_BROKER_ENV]
        worker = Spending(RunSettings(budget=1.0, budget_tokens=1000))
        worker.open("worker", environ)
        assert isinstance(worker.limit, BudgetClient)
        reservation = worker.limit.reserve(Decimal("0.4"), 300)
        assert isinstance(reservation, Reservation)
        worker.limit.settle(reservation, Decimal("1.5"), 200)
        worker.close()
        worker.close()  # closing twice is harmless
        assert worker.overspent() is None  # a worker does not hold the budget
        assert controller.limit.spent == Decimal("1.5")
        assert controller.overspent() == (
            "over budget: spent $1.50 of $1.00 "
            "(calls already in flight, or usage above its projection, passed it)"
        )
    finally:
        controller.close()
    with pytest.raises(BudgetBrokerError, match="cannot be reached"):  # the broker is closed
        BudgetClient(address, timeout=1.0)


def test_a_worker_without_a_broker_holds_its_own_budget() -> None:
    run = Spending(RunSettings(budget_tokens=10))
    run.open("worker", {})
    assert isinstance(run.limit, Budget) and run.limit.limit_tokens == 10
    run.close()


def test_closing_stops_the_broker_once(monkeypatch: pytest.MonkeyPatch) -> None:
    closed: list[str] = []
    monkeypatch.setattr(BudgetBroker, "close", lambda self: closed.append("broker"))
    run = Spending(RunSettings(budget=1.0))
    run.open("controller", {})
    run.close()
    run.close()
    assert closed == ["broker"]


def test_a_models_tokens_are_looked_up_once_per_benchmark(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_llmjudge.cost import tokens

    looked: list[str] = []
    monkeypatch.setattr(tokens, "tokenizer_for", lambda label: looked.append(label))
    run = Spending(RunSettings())
    price = _price(MINI)
    profile = run.model_tokens(
        "B1",
        MINI,
        price,
        default_output=300,
        max_tokens=64,
        calls=lambda: [(500, 100), (40, 0)],
        outputs=lambda: [7, 9],
    )
    assert profile == ModelTokens(price, None, 5.0, (7, 9), 300, 64)
    again = run.model_tokens("B1", MINI, None, default_output=1, max_tokens=None, calls=lambda: [(1, 1)])
    assert again is profile and looked == [MINI]
    other = run.model_tokens("B2", MINI, None, default_output=100, max_tokens=None)
    assert other == ModelTokens(None, None, None, (), 100, None) and looked == [MINI, MINI]
    run.model_tokens("B1", "openai:other", None, default_output=100, max_tokens=None)
    assert looked == [MINI, MINI, "openai:other"]


def test_a_call_reserves_its_projection_in_the_run_budget() -> None:
    run = Spending(RunSettings(budget=1.0))
    run.open("single", {})
    price = _price(MINI)
    profile = ModelTokens(price, output_history=(20, 90))
    request = "x" * 400
    budget = run.call_budget(profile, request, TASK_BUDGET_KIND)
    assert budget is not None and budget.limit is run.limit
    cost, count = projected_call(request, profile)
    assert (
        (budget.cost, budget.tokens, budget.kind)
        == (cost, count, TASK_BUDGET_KIND)
        == (cost, 210, "task-budget")
    )
    assert math.isclose(float(cost), float(cost_of(price, 120, 0, 90)))
    default = run.call_budget(profile, request)
    assert default is not None and default.kind == BUDGET_KIND
    assert run.overspent() is None
    run.close()


def test_a_response_with_no_usage_at_all_is_estimated_from_its_answer() -> None:
    class Bare:
        parts = (Part("x" * 12),)  # a ModelResponse-like object with no usage attribute

    usage = priced_usage(None, [Bare()], request_chars=80)
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (20, 3, 1)
    unknown = priced_usage(None, [Counts()])  # no request text given: none is counted
    assert (unknown.input_tokens, unknown.output_tokens, unknown.request_chars) == (0, 0, 0)


def test_parts_without_text_or_arguments_add_nothing() -> None:
    class ToolCall:
        args = "abcd"

    class Text:
        content = "efg"

    assert answer_chars([ToolCall(), Text(), object()]) == 7


def test_without_an_environment_given_the_process_environment_carries_the_broker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(BUDGET_BROKER_ENV, raising=False)
    controller = Spending(RunSettings(budget_tokens=100))
    controller.open("controller")
    try:
        assert BUDGET_BROKER_ENV in os.environ
        worker = Spending(RunSettings(budget_tokens=100))
        worker.open("worker")
        assert isinstance(worker.limit, BudgetClient)
        worker.close()
    finally:
        controller.close()


def test_each_response_says_how_its_tokens_are_known() -> None:
    reported = Response(
        Counts(input_tokens=100, cache_read_tokens=20, cache_write_tokens=30, output_tokens=5)
    )
    assert spending._tokens(reported, 0) == (RequestTokens(100, 20, 5, 30, False), "reported")
    batch = Response(Counts(input_tokens=9, output_tokens=1), details={"processing": "batch"})
    assert spending._tokens(batch, 0) == (RequestTokens(9, 0, 1, 0, True), "reported")
    assert spending._tokens(Counts(), 10) == (RequestTokens(3, 0, 0), "estimated")
    huge = spending.IMPLAUSIBLE_TOKENS + 1
    assert spending._tokens(Counts(output_tokens=huge), 0) == (RequestTokens(0, 0, huge), "implausible")


def test_no_usage_plus_no_usage_is_none() -> None:
    assert Usage().plus(Usage()) == Usage() and Usage().plus(Usage()).cost is None
