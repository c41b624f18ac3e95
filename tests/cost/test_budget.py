"""A budget that holds: a call whose projection fits only once the calls in flight settle waits
for them; one that does not fit beside the settled spend is refused, and so is every call after
it; calls in flight finish and are kept; safe under concurrent callers."""

from __future__ import annotations

import random
import threading
import time
from decimal import Decimal

import pytest

from pytest_llmjudge.cost.budget import WAIT, Budget, Reservation, as_amount, check_priced
from pytest_llmjudge.cost.pricing import price_for

CALL = Decimal("0.0004")


def reserved(outcome: Reservation | str | None) -> Reservation:
    assert isinstance(outcome, Reservation)
    return outcome


def test_no_call_starts_that_would_pass_the_limit() -> None:
    budget = Budget(0.001)
    first, second = reserved(budget.reserve(CALL, 100)), reserved(budget.reserve(CALL, 100))
    assert budget.in_flight == 2 * CALL
    assert budget.reserve(CALL, 100) == WAIT  # 0.0012 with the calls in flight: they may use less
    assert not budget.reached
    budget.settle(first, CALL, 100)
    budget.settle(second, CALL, 100)
    assert budget.reserve(CALL, 100) is None  # 0.0012 > 0.001 with what they used
    assert budget.reached


def test_a_waiting_call_starts_when_the_calls_in_flight_used_less() -> None:
    budget = Budget(0.001)
    first, second = reserved(budget.reserve(CALL, 100)), reserved(budget.reserve(CALL, 100))
    assert budget.reserve(CALL, 100) == WAIT
    budget.settle(first, Decimal("0.0001"), 60)
    third = reserved(budget.reserve(CALL, 100))  # 0.0001 + 2 × 0.0004 in flight ≤ 0.001
    budget.settle(second, CALL, 100)
    assert budget.reserve(CALL, 100) == WAIT  # 0.0005 + 0.0004 ≤ 0.001, unless the third uses it
    budget.settle(third, CALL, 100)
    assert budget.reserve(CALL, 100) is None  # 0.0009 + 0.0004 > 0.001: the last call was the third


def test_once_reached_no_call_starts_however_small() -> None:
    budget = Budget(0.001)
    budget.settle(reserved(budget.reserve(Decimal("0.0009"), 1)), Decimal("0.0009"), 1)
    assert budget.reserve(Decimal("0.0002"), 1) is None
    assert budget.reserve(Decimal(0), 0) is None


def test_calls_in_flight_settle_with_what_they_used() -> None:
    budget = Budget(0.001)
    first, second = reserved(budget.reserve(CALL, 100)), reserved(budget.reserve(CALL, 100))
    assert budget.reserve(CALL, 100) == WAIT
    budget.settle(first, Decimal("0.0001"), 60)
    budget.settle(second, Decimal("0.0005"), 90)
    assert (budget.spent, budget.spent_tokens, budget.in_flight) == (Decimal("0.0006"), 150, 0)
    assert budget.reserve(Decimal("0.0005"), 1) is None
    assert budget.message() == "budget reached: spent $0.0006 of $0.001"


def test_a_settled_actual_replaces_the_projection() -> None:
    budget = Budget(0.001)
    reservation = budget.reserve(CALL, 100)
    assert reservation is not None
    budget.settle(reservation, Decimal("0.0001"), 10)
    # the room the projection held is free again: 0.0001 + 2 × 0.0004 ≤ 0.001
    assert budget.reserve(CALL, 100) is not None and budget.reserve(CALL, 100) is not None


def test_a_call_that_used_more_than_projected_stops_the_next_one() -> None:
    budget = Budget(0.001)
    reservation = budget.reserve(CALL, 100)
    assert reservation is not None
    budget.settle(reservation, Decimal("0.002"), 100)
    assert budget.reserve(Decimal(0), 0) is None
    assert budget.message() == "budget reached: spent $0.002 of $0.001"


def test_settling_twice_is_an_error() -> None:
    budget = Budget(1)
    reservation = budget.reserve(CALL, 1)
    assert reservation is not None
    budget.settle(reservation, CALL, 1)
    with pytest.raises(ValueError, match="not in flight"):
        budget.settle(reservation, CALL, 1)
    with pytest.raises(ValueError, match="not in flight"):
        budget.settle(Reservation(99, CALL, 1), CALL, 1)


def test_a_token_budget_holds_the_same_way() -> None:
    budget = Budget(None, 1000)
    first = reserved(budget.reserve(Decimal(0), 600))
    assert budget.reserve(Decimal(0), 500) == WAIT
    budget.settle(first, Decimal(0), 600)
    assert budget.reserve(Decimal(0), 500) is None
    assert budget.message() == "budget reached: spent 600 of 1,000 tokens"


def test_free_calls_never_reach_a_usd_budget() -> None:
    budget = Budget(0)
    assert all(budget.reserve(Decimal(0), 500) is not None for _ in range(100))


@pytest.mark.parametrize(("cost", "tokens"), [(Decimal(-1), 1), (Decimal("NaN"), 1), (Decimal(0), -1)])
def test_bad_projections_are_refused(cost: Decimal, tokens: int) -> None:
    with pytest.raises(ValueError):
        Budget(1).reserve(cost, tokens)


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="--llmjudge-budget"):
        Budget(-1)
    with pytest.raises(ValueError, match="--llmjudge-budget-tokens"):
        Budget(None, -5)


def test_concurrent_callers_never_pass_the_limit() -> None:
    budget = Budget(Decimal("0.01"))
    started: list[Decimal] = []
    lock = threading.Lock()
    go = threading.Barrier(8)
    peak: list[Decimal] = [Decimal(0)]

    def caller(seed: int) -> None:
        rng = random.Random(seed)
        go.wait()
        while True:
            projected = Decimal(rng.randint(1, 9)) / 10_000
            reservation = budget.reserve(projected, 10)
            if reservation is None:
                return
            if not isinstance(reservation, Reservation):  # waits for the calls in flight
                time.sleep(0.0001)
                continue
            with lock:
                started.append(projected)
                peak[0] = max(peak[0], budget.spent + budget.in_flight)
            # an actual at or under the projection, as a call with max_tokens projected uses
            budget.settle(reservation, projected * rng.randint(5, 10) / 10, 10)

    threads = [threading.Thread(target=caller, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert budget.in_flight == 0
    assert budget.spent <= Decimal("0.01") and peak[0] <= Decimal("0.01")
    assert sum(started) > Decimal("0.009")  # the budget was used, not refused early
    assert budget.reached


def test_every_called_model_needs_a_price_under_a_usd_budget() -> None:
    prices = {
        "openai:gpt-4o-mini": price_for("openai:gpt-4o-mini", None, {}),
        "openai:llama3@http://localhost:8000/v1": None,
        "local:gemma-3-270m-q4_k_m": price_for("local:gemma-3-270m-q4_k_m", None, {}),
    }
    message = check_priced(prices)
    assert message is not None
    assert "openai:llama3@http://localhost:8000/v1" in message
    assert "--llmjudge-price openai:llama3@http://localhost:8000/v1=IN/OUT" in message
    assert "gpt-4o-mini" not in message
    del prices["openai:llama3@http://localhost:8000/v1"]
    assert check_priced(prices) is None


def test_spending_exactly_the_limit_is_not_over_it() -> None:
    budget = Budget(Decimal("0.01"), 100)
    reservation = budget.reserve(Decimal("0.01"), 100)
    assert isinstance(reservation, Reservation)
    budget.settle(reservation, Decimal("0.01"), 100)
    assert budget.overspent() is None
    tokens = Budget(None, 100)
    reservation = tokens.reserve(Decimal(0), 50)
    assert isinstance(reservation, Reservation)
    tokens.settle(reservation, Decimal(0), 150)
    assert tokens.overspent() == (
        "over budget: spent 150 of 100 tokens "
        "(calls already in flight, or usage above its projection, passed it)"
    )


def test_amounts_are_read_as_written_and_a_bad_one_is_named() -> None:
    assert as_amount(0.1, "x") == Decimal("0.1")  # not the binary float's expansion
    assert as_amount("2.50", "x") == Decimal("2.50") and as_amount(3, "x") == Decimal(3)
    with pytest.raises(ValueError) as raised:
        as_amount("cheap", "--llmjudge-budget")
    assert str(raised.value) == "--llmjudge-budget 'cheap' is not a number"


def test_bad_projections_and_settlements_say_what_is_wrong() -> None:
    budget = Budget(1)
    messages = {
        "a projected cost must be a finite number ≥ 0, not Decimal('-1')": lambda: budget.reserve(
            Decimal(-1), 1
        ),
        "projected tokens must be ≥ 0, not -2": lambda: budget.reserve(Decimal(0), -2),
    }
    reservation = budget.reserve(Decimal(0), 0)
    assert isinstance(reservation, Reservation) and reservation.id == 1
    messages["an actual cost must be a finite number ≥ 0, not Decimal('-3')"] = lambda: budget.settle(
        reservation, Decimal(-3), 0
    )
    messages["actual tokens must be ≥ 0, not -4"] = lambda: budget.settle(reservation, Decimal(0), -4)
    for message, call in messages.items():
        with pytest.raises(ValueError) as raised:
            call()
        assert str(raised.value) == message


def test_a_call_projected_exactly_at_the_token_limit_starts() -> None:
    budget = Budget(None, 100)
    assert isinstance(budget.reserve(Decimal(0), 100), Reservation)
    assert Budget(None, 100).reserve(Decimal(0), 101) is None


def test_a_budget_of_nothing_lets_only_free_calls_start_and_says_so() -> None:
    tokens = Budget(None, 0)
    assert tokens.reserve(Decimal(0), 1) is None
    assert tokens.message() == "budget reached: spent 0 of 0 tokens"
    usd = Budget(0.0)
    assert usd.reserve(Decimal("0.0001"), 1) is None
    assert usd.message() == "budget reached: spent $0.00 of $0.00"


def test_the_message_names_the_limit_the_run_has_before_any_refusal() -> None:
    assert Budget(1.0).message() == "budget reached: spent $0.00 of $1.00"
    assert Budget(None, 100).message() == "budget reached: spent 0 of 100 tokens"
    assert Budget(1.0, 100).message() == "budget reached: spent $0.00 of $1.00"


def test_every_unpriced_model_is_named() -> None:
    message = check_priced(
        {"openai:b": None, "openai:a": None, "openai:gpt-4o-mini": price_for("openai:gpt-4o-mini")}
    )
    assert message is not None
    assert "no price is known for openai:a, openai:b." in message
    assert "--llmjudge-price openai:a=IN/OUT" in message
