"""What calls used: requests, tokens and their cost."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Usage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # cost: priced where the call is made, each response on its own (cost.pricing)
    cached_input_tokens: int = 0  # of ``input_tokens``, read from the provider's prompt cache
    cost: Decimal | None = None  # USD, set where the call is priced; see ``spent``
    request_chars: int = 0  # characters of the request text sent (``llmjudge.sent_text``); 0: unknown
    # responses whose usage the server did not report (estimated from characters, ``spending``), and
    # those that reported more tokens than any model's context holds (counted as reported)
    estimated: int = 0
    implausible: int = 0

    @property
    def spent(self) -> Decimal | None:
        """USD of these calls: 0 when nothing was used, None when tokens went unpriced (a model
        with no known price, or a call no one priced)."""
        if self.cost is not None:
            return self.cost
        used = self.requests or self.input_tokens or self.output_tokens
        return None if used else Decimal(0)

    def plus(self, other: Usage) -> Usage:
        """Both calls' usage: counts and costs added (an unknown cost makes the sum unknown)."""
        mine, theirs = self.spent, other.spent
        cost = None if mine is None or theirs is None else mine + theirs
        return Usage(
            self.requests + other.requests,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            None if self.cost is None and other.cost is None else cost,
            self.request_chars or other.request_chars,
            self.estimated + other.estimated,
            self.implausible + other.implausible,
        )


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The usage of several calls (a case's samples, a call's attempts)."""
    total = Usage()
    for usage in usages:
        total = total.plus(usage)
    return total
