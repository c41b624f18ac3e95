"""One budget for an xdist run: the controller's broker serves reserve/settle over loopback;
tested with threads standing in for workers, no xdist."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from decimal import Decimal

import pytest

from pytest_llmjudge.cost.budget import WAIT, Budget, Reservation
from pytest_llmjudge.cost.budget_broker import (
    BUDGET_BROKER_ENV,
    BudgetBroker,
    BudgetBrokerError,
    BudgetClient,
)

CALL = Decimal("0.0003")


@pytest.fixture
def broker() -> Iterator[BudgetBroker]:
    broker = BudgetBroker(Budget(Decimal("0.01")))
    yield broker
    broker.close()


def test_two_workers_reserving_at_once_share_one_budget(broker: BudgetBroker) -> None:
    started = [0, 0]
    go = threading.Barrier(2)

    def worker(index: int) -> None:
        client = BudgetClient(broker.address)
        go.wait()
        while (reservation := client.reserve(CALL, 50)) is not None:
            if not isinstance(reservation, Reservation):  # room once the other's call settles
                time.sleep(0.0005)
                continue
            started[index] += 1
            time.sleep(0.001)  # the call, in flight while the other worker reserves
            client.settle(reservation, CALL, 50)
        client.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(started) == int(Decimal("0.01") / CALL)  # 33 calls: the 34th would pass $0.01
    assert broker.budget.spent == sum(started) * CALL <= Decimal("0.01")
    assert broker.budget.spent_tokens == 50 * sum(started)


def test_a_refusal_carries_the_budget_message(broker: BudgetBroker) -> None:
    client = BudgetClient(broker.address)
    reservation = client.reserve(Decimal("0.009"), 1)
    assert isinstance(reservation, Reservation)
    assert client.reserve(Decimal("0.002"), 1) == WAIT  # fits unless the call in flight uses it all
    client.settle(reservation, Decimal("0.0085"), 1)
    assert client.reserve(Decimal("0.002"), 1) is None
    assert client.message() == "budget reached: spent $0.0085 of $0.01"
    client.close()


def test_a_worker_that_goes_away_is_charged_its_calls_in_flight(broker: BudgetBroker) -> None:
    client = BudgetClient(broker.address)
    assert client.reserve(CALL, 70) is not None
    client.close()
    deadline = time.monotonic() + 5
    while broker.budget.spent != CALL and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (broker.budget.spent, broker.budget.spent_tokens, broker.budget.in_flight) == (CALL, 70, 0)


def test_a_worker_settles_only_its_own_calls(broker: BudgetBroker) -> None:
    first, second = BudgetClient(broker.address), BudgetClient(broker.address)
    reservation = first.reserve(CALL, 1)
    assert reservation is not None
    with pytest.raises(BudgetBrokerError, match="not this worker's call in flight"):
        second.settle(reservation, CALL, 1)
    first.settle(reservation, CALL, 1)
    first.close()
    second.close()


def test_a_connection_without_the_token_is_refused(broker: BudgetBroker) -> None:
    address = "wrong" + broker.address[broker.address.index("@") :]
    with pytest.raises(BudgetBrokerError, match="wrong token"):
        BudgetClient(address)


def test_a_broker_that_is_gone_is_an_error() -> None:
    broker = BudgetBroker(Budget(1))
    address = broker.address
    broker.close()
    with pytest.raises(BudgetBrokerError, match=r"cannot be reached|did not answer"):
        BudgetClient(address, timeout=2)


def test_the_address_is_exported_to_workers_and_taken_back() -> None:
    environ = {BUDGET_BROKER_ENV: "earlier"}
    broker = BudgetBroker(Budget(1))
    broker.export(environ)
    assert environ[BUDGET_BROKER_ENV] == broker.address
    broker.close()
    assert environ == {BUDGET_BROKER_ENV: "earlier"}


def test_a_malformed_request_is_an_error_not_a_hang_up(broker: BudgetBroker) -> None:
    client = BudgetClient(broker.address)
    with pytest.raises(BudgetBrokerError, match="bad request"):
        client.reserve(Decimal(-1), 1)
    assert client.reserve(CALL, 1) is not None  # the connection still serves
    client.close()
