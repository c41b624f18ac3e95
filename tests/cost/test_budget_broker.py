"""One budget for an xdist run: the controller's broker serves reserve/settle over loopback;
tested with threads standing in for workers, no xdist."""

from __future__ import annotations

import json
import socket
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


def _talk(address: str, *lines: bytes) -> list[dict[str, object]]:
    """Raw protocol lines to the broker (as a worker sends them), and its answers."""
    token, _, host_port = address.rpartition("@")
    host, _, port = host_port.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        answers = connection.makefile("rb")
        connection.sendall(token.encode() + b"\n")
        said = [json.loads(answers.readline())]
        for line in lines:
            connection.sendall(line + b"\n")
            said.append(json.loads(answers.readline()))
        answers.close()
    return said


def test_the_protocol_a_worker_speaks(broker: BudgetBroker) -> None:
    said = _talk(
        broker.address,
        b'{"op": "reserve", "cost": "0.001", "tokens": 10}',
        b'{"op": "settle", "id": 1, "cost": "0.002", "tokens": 0}',
        b'{"op": "status"}',
        b'{"op": "reserve", "cost": "cheap", "tokens": 1}',
        b'{"op": "reserve", "cost": "0", "tokens": true}',
        b'{"op": "reserve", "cost": "0", "tokens": 1.5}',
        b'{"op": "reserve", "cost": "0", "tokens": -1}',
        b'{"op": "settle", "id": 9, "cost": "0", "tokens": 0}',
        b'{"op": "borrow"}',
        b'{"op": "reserve", "cost": "0", "tokens": 1}',
        b'{"op": "settle", "id": 2, "cost": "lots", "tokens": 1}',
    )
    assert said == [
        {"ok": True},
        {"id": 1},
        {"ok": True},
        {"message": "budget reached: spent $0.002 of $0.01", "reached": False},
        {"error": "bad request: cost 'cheap' is not a number"},
        {"error": "bad request: a token count must be an integer ≥ 0, not True"},
        {"error": "bad request: a token count must be an integer ≥ 0, not 1.5"},
        {"error": "bad request: a token count must be an integer ≥ 0, not -1"},
        {"error": "reservation 9 is not this worker's call in flight"},
        {"error": "unknown request 'borrow'"},
        {"id": 2},
        {"error": "bad request: cost 'lots' is not a number"},
    ]
    assert broker.budget.spent == Decimal("0.002") and broker.budget.spent_tokens == 0


def test_a_token_that_is_not_text_is_refused_too(broker: BudgetBroker) -> None:
    host_port = broker.address.rpartition("@")[2]
    with socket.create_connection(tuple(host_port.rsplit(":", 1)), timeout=5) as connection:  # type: ignore[arg-type]
        connection.sendall("tökén\n".encode())
        assert json.loads(connection.makefile("rb").readline()) == {"error": "refused: wrong token"}


def test_a_worker_keeps_its_reservation_as_projected(broker: BudgetBroker) -> None:
    client = BudgetClient(broker.address)
    assert client.reserve(CALL, 70) == Reservation(1, CALL, 70)
    client.close()


def _silent_server(answer: bytes | None) -> tuple[socket.socket, str]:
    """A loopback server that takes one connection and answers every line with ``answer`` (None:
    never answers)."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        connection, _ = server.accept()
        with connection, connection.makefile("rb") as lines:
            for _ in lines:
                if answer is not None:
                    connection.sendall(answer + b"\n")

    threading.Thread(target=serve, daemon=True).start()
    return server, f"token@127.0.0.1:{server.getsockname()[1]}"


def test_a_broker_that_does_not_answer_in_time_is_an_error_not_a_hang() -> None:
    server, address = _silent_server(None)
    with server, pytest.raises(BudgetBrokerError) as raised:
        BudgetClient(address, timeout=0.3)
    assert str(raised.value).startswith(
        f"the run's budget broker at {address.partition('@')[2]} did not answer ("
    )


def test_a_broker_answering_something_else_is_an_error() -> None:
    server, address = _silent_server(b"[1, 2]")
    with server, pytest.raises(BudgetBrokerError) as raised:
        BudgetClient(address, timeout=5)
    assert str(raised.value) == f"the run's budget broker at {address.partition('@')[2]} answered [1, 2]"
