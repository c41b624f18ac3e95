"""What a run's calls cost, added up from its case records: per case, per benchmark, per run.

Each call is priced where it is made (``cost.pricing``, usage × price) and its USD travels in
the records as a float; this module only sums them (as decimals of those floats, so a sum of
$0.00018 calls shows no binary noise). A call to a model with no known price has no cost: its
tokens are counted, and the totals name the model instead of guessing. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from ..cost.pricing import format_usd, unpriced_message
from ..cost.spending import CHARS_PER_TOKEN, IMPLAUSIBLE_TOKENS
from .records import CaseRecord, PairAnswerRecord, ProducedOutput, SampleRecord


def amount(value: float) -> Decimal:
    """A recorded USD float as the decimal it was written from (``0.00018``, not its binary value)."""
    return Decimal(repr(value))


def case_cost(samples: Sequence[SampleRecord], produced: ProducedOutput | None) -> tuple[float | None, float]:
    """A case's cost in this run (its judge samples and its task call; None when one of them went
    to a model with no known price) and what its cache hits saved."""
    parts = [s.cost_usd for s in samples]
    saved = [s.saved_usd for s in samples]
    if produced is not None:
        parts.append(produced.cost_usd)
        saved.append(produced.saved_usd)
    cost = (
        None
        if any(p is None for p in parts)
        else sum((amount(p) for p in parts if p is not None), Decimal(0))
    )
    return (None if cost is None else float(cost)), float(sum((amount(s) for s in saved if s), Decimal(0)))


@dataclass(frozen=True)
class CostTotal:
    """The cost of some calls: USD of those with a price, what cache hits saved, and the models
    called without a price (their calls are not in ``usd``)."""

    usd: Decimal = Decimal(0)
    saved: Decimal = Decimal(0)
    unpriced: tuple[str, ...] = ()
    estimated: int = 0  # calls whose server reported no usage: tokens estimated from characters
    implausible: int = 0  # calls that reported more tokens than any model's context holds

    @property
    def known(self) -> Decimal | None:
        """The whole cost, or None when some of it is not known."""
        return None if self.unpriced else self.usd

    def text(self) -> str:
        """``$0.0012``; ``unknown`` when no call had a price; ``$0.0012 + unknown`` when some had none."""
        if not self.unpriced:
            return format_usd(self.usd)
        return f"{format_usd(self.usd)} + unknown" if self.usd else "unknown"

    def notes(self) -> list[str]:
        """Why part of the cost is unknown (one line per model without a price), and what the
        counts rest on when a server did not report usage, or reported implausible usage (once)."""
        notes = [unpriced_message(model) for model in self.unpriced]
        if self.estimated:
            notes.append(
                f"the judge server did not report usage for {self.estimated} call(s) (none, zero or "
                f"negative): their tokens are estimated from the characters sent and answered, "
                f"{CHARS_PER_TOKEN} a token, and a budget counts them"
            )
        if self.implausible:
            notes.append(
                f"the judge server reported implausible usage for {self.implausible} call(s) (more than "
                f"{IMPLAUSIBLE_TOKENS:,} tokens in one response, beyond any model's context): counted "
                "as reported, so a budget still holds; check what the server reports"
            )
        return notes


def cost_of(records: Iterable[CaseRecord]) -> CostTotal:
    """The cost of the calls ``records`` made in this run."""
    usd = saved = Decimal(0)
    unpriced: dict[str, None] = {}  # in order of first appearance
    estimated = implausible = 0
    for record in records:
        estimated += record.usage_estimated
        implausible += record.usage_implausible
        answers = record.pairwise.answers if record.pairwise is not None else ()
        calls: list[SampleRecord | PairAnswerRecord] = [*record.samples, *answers]  # a pairwise
        for call in calls:  # case's calls are its two orders
            if call.cost_usd is None:  # a panel's case: the members without a price
                unpriced.update(dict.fromkeys(record.panel.unpriced() if record.panel else [record.model]))
            else:
                usd += amount(call.cost_usd)
            saved += amount(getattr(call, "saved_usd", None) or 0.0)
        produced = record.produced
        if produced is not None:
            if produced.cost_usd is None:
                unpriced[produced.task or "task"] = None
            else:
                usd += amount(produced.cost_usd)
            saved += amount(produced.saved_usd or 0.0)
    return CostTotal(usd, saved, tuple(unpriced), estimated, implausible)


def benchmark_costs(records: Iterable[CaseRecord]) -> dict[str, CostTotal]:
    """``cost_of`` each benchmark's records, by benchmark code."""
    grouped: dict[str, list[CaseRecord]] = {}
    for record in records:
        grouped.setdefault(record.benchmark, []).append(record)
    return {code: cost_of(items) for code, items in grouped.items()}
