"""A run's spending limit in USD and/or tokens, held across concurrent calls.

A call reserves its projected cost before it starts (``reserve``) and settles it with what it
actually used when it ends (``settle``). A call whose projection fits beside the settled spend
but not beside the calls in flight too waits for them (``WAIT``: they may use less than they
projected); one that does not fit beside the settled spend is refused, and from then on every
call is refused (the budget is *reached*), so no call starts after the first that could not.
Calls already in flight finish and are kept. So the spend never passes the limit while calls
use no more than projected, and the run stops less than one call short of it. Thread-safe;
knows nothing of pytest, asyncio or prices (``check_priced`` only asks whether a model has one).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Final, Literal, Protocol

from .pricing import PRICE_OPTION, format_usd

if TYPE_CHECKING:
    from .pricing import Price

BUDGET_OPTION = "--llmjudge-budget"
BUDGET_TOKENS_OPTION = "--llmjudge-budget-tokens"
REACHED = "budget reached"
OVER = "over budget"
WAIT: Final = "wait"  # ``reserve``: room once the calls in flight settle; ask again then


@dataclass(frozen=True)
class Reservation:
    """A call's place in the budget while it is in flight: its projected cost and tokens."""

    id: int
    cost: Decimal
    tokens: int


class SpendLimit(Protocol):
    """What a call start needs: a ``Budget`` in one process, a ``BudgetClient`` in an xdist worker."""

    def reserve(
        self, projected_cost: Decimal, projected_tokens: int
    ) -> Reservation | Literal["wait"] | None: ...

    def settle(self, reservation: Reservation, actual_cost: Decimal, actual_tokens: int) -> None: ...

    def message(self) -> str: ...


def as_amount(value: Decimal | float | int | str, what: str) -> Decimal:
    """A finite amount ≥ 0 as a Decimal (a float by its shortest repr: 0.1 → Decimal('0.1'))."""
    try:
        amount = (
            value
            if isinstance(value, Decimal)
            else Decimal(repr(value) if isinstance(value, float) else value)
        )
    except ArithmeticError:
        raise ValueError(f"{what} {value!r} is not a number") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{what} must be a finite number ≥ 0, not {value!r}")
    return amount


class Budget:
    """Spent plus in-flight never passes ``limit_usd`` or ``limit_tokens`` (None: no limit) as
    long as calls use no more than they projected; a call that used more is kept, and no call
    starts after it."""

    def __init__(self, limit_usd: Decimal | float | None, limit_tokens: int | None = None) -> None:
        if limit_tokens is not None and limit_tokens < 0:
            raise ValueError(f"{BUDGET_TOKENS_OPTION} must be ≥ 0, not {limit_tokens}")
        self.limit_usd = None if limit_usd is None else as_amount(limit_usd, BUDGET_OPTION)
        self.limit_tokens = limit_tokens
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._open: dict[int, Reservation] = {}
        self._spent = Decimal(0)
        self._spent_tokens = 0
        self._reached: Literal["usd", "tokens"] | None = None

    def reserve(self, projected_cost: Decimal, projected_tokens: int) -> Reservation | Literal["wait"] | None:
        """Room for one call projected to cost ``projected_cost`` and use ``projected_tokens``;
        ``WAIT`` when it fits only once calls in flight settle; None: the budget is reached and
        the call must not start."""
        cost = as_amount(projected_cost, "a projected cost")
        if projected_tokens < 0:
            raise ValueError(f"projected tokens must be ≥ 0, not {projected_tokens}")
        with self._lock:
            if self._reached is None:
                self._reached = self._passed(cost, projected_tokens, in_flight=False)
            if self._reached is not None:
                return None
            if self._passed(cost, projected_tokens, in_flight=True) is not None:
                return WAIT
            reservation = Reservation(next(self._ids), cost, projected_tokens)
            self._open[reservation.id] = reservation
            return reservation

    def _passed(self, cost: Decimal, tokens: int, *, in_flight: bool) -> Literal["usd", "tokens"] | None:
        """Which limit this call would pass beside the settled spend (and, ``in_flight``, the
        calls in flight); the caller holds the lock."""
        flying = list(self._open.values()) if in_flight else []
        usd = self._spent + sum((r.cost for r in flying), Decimal(0)) + cost
        if self.limit_usd is not None and usd > self.limit_usd:
            return "usd"
        tokens_used = self._spent_tokens + sum(r.tokens for r in flying) + tokens
        if self.limit_tokens is not None and tokens_used > self.limit_tokens:
            return "tokens"
        return None

    def settle(self, reservation: Reservation, actual_cost: Decimal, actual_tokens: int) -> None:
        """End an in-flight call: what it actually used replaces its projection. A call that
        failed after its request went out settles with the usage reported, or its projection
        when none was (the provider may bill it)."""
        cost = as_amount(actual_cost, "an actual cost")
        if actual_tokens < 0:
            raise ValueError(f"actual tokens must be ≥ 0, not {actual_tokens}")
        with self._lock:
            if self._open.pop(reservation.id, None) is None:
                raise ValueError(f"reservation {reservation.id} is not in flight (settled twice?)")
            self._spent += cost  # past a limit now, the next reserve finds it so
            self._spent_tokens += actual_tokens

    @property
    def spent(self) -> Decimal:
        with self._lock:
            return self._spent

    @property
    def spent_tokens(self) -> int:
        with self._lock:
            return self._spent_tokens

    @property
    def in_flight(self) -> Decimal:
        """The projected cost of the calls reserved and not yet settled."""
        with self._lock:
            return sum((r.cost for r in self._open.values()), Decimal(0))

    @property
    def in_flight_tokens(self) -> int:
        with self._lock:
            return sum(r.tokens for r in self._open.values())

    @property
    def reached(self) -> bool:
        """Whether a call has been refused: from then on no call starts."""
        with self._lock:
            return self._reached is not None

    def overspent(self) -> str | None:
        """``over budget: spent $X of $Y`` when the settled spend passed a limit (calls already in
        flight, or a call that used more than projected, spent past it); None within the limits."""
        with self._lock:
            if self.limit_usd is not None and self._spent > self.limit_usd:
                spent = f"{format_usd(self._spent)} of {format_usd(self.limit_usd)}"
            elif self.limit_tokens is not None and self._spent_tokens > self.limit_tokens:
                spent = f"{self._spent_tokens:,} of {self.limit_tokens:,} tokens"
            else:
                return None
        return f"{OVER}: spent {spent} (calls already in flight, or usage above its projection, passed it)"

    def message(self) -> str:
        """``budget reached: spent $X of $Y`` (the limit that stopped the run; spend settled so far)."""
        with self._lock:
            if self._reached == "tokens" or (self._reached is None and self.limit_usd is None):
                return f"{REACHED}: spent {self._spent_tokens:,} of {self.limit_tokens or 0:,} tokens"
            return f"{REACHED}: spent {format_usd(self._spent)} of {format_usd(self.limit_usd or Decimal(0))}"


def check_priced(models_and_prices: Mapping[str, Price | None]) -> str | None:
    """Under a USD budget, the message that stops the run before its first call when a model the
    run would call has no price (a budget summed over only the priced calls is no budget)."""
    unpriced = sorted(model for model, price in models_and_prices.items() if price is None)
    if not unpriced:
        return None
    names = ", ".join(unpriced)
    example = f"{PRICE_OPTION} {unpriced[0]}=IN/OUT"
    return (
        f"{BUDGET_OPTION} needs the price of every model the run calls; no price is known for {names}. "
        f"Set one with {example} (USD per million input/output tokens), "
        f"or limit tokens instead with {BUDGET_TOKENS_OPTION}."
    )
