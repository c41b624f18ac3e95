"""One budget for a whole xdist run: the controller holds it, workers reserve and settle over
loopback.

The controller opens a ``BudgetBroker`` on a loopback port before its workers exist and exports
its address (``BUDGET_BROKER_ENV``, ``TOKEN@127.0.0.1:PORT``), as it brokers the local judge
server (``local.broker``). Each worker keeps one connection (``BudgetClient``) and sends one JSON
line per request: ``reserve`` (answered with an id, ``wait`` or a refusal) and ``settle`` with the
same meaning as on a ``Budget``, ``status``
for the message. A worker that goes away with calls in flight has them settled at their
projection, since their requests may have been billed. Connections without the token are
refused.
"""

from __future__ import annotations

import json
import socket
import threading
from decimal import Decimal
from typing import Any, Literal

from ..local.loopback import LoopbackService
from .budget import WAIT, Budget, Reservation, as_amount

BUDGET_BROKER_ENV = "LLMJUDGE_BUDGET_BROKER"


class BudgetBrokerError(Exception):
    """The controller's budget broker cannot be reached, or refused a request."""


class BudgetBroker(LoopbackService):
    """Serves ``budget`` to the run's workers until ``close``."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        super().__init__(BUDGET_BROKER_ENV, "llmjudge-budget-broker")

    def handle(self, connection: socket.socket) -> None:
        self._worker(connection)

    def _worker(self, connection: socket.socket) -> None:
        """One worker's connection: its requests in order; its unsettled calls when it ends."""
        mine: dict[int, Reservation] = {}
        with connection, connection.makefile("rb") as lines:
            try:
                if lines.readline().decode("ascii", "replace").strip() != self.token:
                    connection.sendall(_line({"error": "refused: wrong token"}))
                    return
                connection.sendall(_line({"ok": True}))
                for line in lines:
                    connection.sendall(_line(self._answer(line, mine)))
            except OSError:
                pass  # the worker went away
            finally:
                for reservation in mine.values():
                    self.budget.settle(reservation, reservation.cost, reservation.tokens)

    def _answer(self, line: bytes, mine: dict[int, Reservation]) -> dict[str, Any]:
        try:
            request = json.loads(line)
            op = request["op"]
            if op == "reserve":
                cost, tokens = as_amount(request["cost"], "cost"), _count(request["tokens"])
                reservation = self.budget.reserve(cost, tokens)
                if reservation is None:
                    return {"refused": self.budget.message()}
                if not isinstance(reservation, Reservation):
                    return {"wait": True}
                mine[reservation.id] = reservation
                return {"id": reservation.id}
            if op == "settle":
                flying = mine.pop(int(request["id"]), None)
                if flying is None:
                    return {"error": f"reservation {request['id']} is not this worker's call in flight"}
                self.budget.settle(flying, as_amount(request["cost"], "cost"), _count(request["tokens"]))
                return {"ok": True}
            if op == "status":
                return {"message": self.budget.message(), "reached": self.budget.reached}
            return {"error": f"unknown request {op!r}"}
        except (ValueError, KeyError, TypeError) as exc:
            return {"error": f"bad request: {exc}"}


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"a token count must be an integer ≥ 0, not {value!r}")
    return value


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


class BudgetClient:
    """A worker's side of the run's budget: ``reserve``, ``settle`` and ``message`` as on a
    ``Budget``, each one request to the controller. Thread-safe (one request at a time)."""

    def __init__(self, address: str, timeout: float = 30.0) -> None:
        token, _, host_port = address.rpartition("@")
        host, _, port = host_port.rpartition(":")
        self._where = host_port
        self._lock = threading.Lock()
        try:
            self._connection = socket.create_connection((host, int(port)), timeout=timeout)
        except (OSError, ValueError) as exc:
            raise BudgetBrokerError(
                f"the run's budget broker at {host_port} cannot be reached ({exc})"
            ) from None
        self._lines = self._connection.makefile("rb")
        self._call_raw(token.encode() + b"\n")

    def reserve(self, projected_cost: Decimal, projected_tokens: int) -> Reservation | Literal["wait"] | None:
        answer = self._call({"op": "reserve", "cost": str(projected_cost), "tokens": projected_tokens})
        if "refused" in answer:
            return None
        if answer.get("wait"):
            return WAIT
        return Reservation(int(answer["id"]), projected_cost, projected_tokens)

    def settle(self, reservation: Reservation, actual_cost: Decimal, actual_tokens: int) -> None:
        self._call({"op": "settle", "id": reservation.id, "cost": str(actual_cost), "tokens": actual_tokens})

    def message(self) -> str:
        return str(self._call({"op": "status"})["message"])

    def close(self) -> None:
        """Hang up; calls still reserved are settled at their projection by the broker."""
        with self._lock:
            self._lines.close()
            self._connection.close()

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        return self._call_raw(_line(request))

    def _call_raw(self, data: bytes) -> dict[str, Any]:
        with self._lock:
            try:
                self._connection.sendall(data)
                line = self._lines.readline()
                answer = json.loads(line)
            except (OSError, ValueError) as exc:
                raise BudgetBrokerError(
                    f"the run's budget broker at {self._where} did not answer ({exc})"
                ) from None
        if not isinstance(answer, dict):
            raise BudgetBrokerError(f"the run's budget broker at {self._where} answered {answer!r}")
        if "error" in answer:
            raise BudgetBrokerError(f"the run's budget broker at {self._where}: {answer['error']}")
        return answer
