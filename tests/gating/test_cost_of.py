"""A run's cost as the summary states it, summed from its case records: every kind of call a case
makes (judge samples, the two orders of a pairwise case, its task call), the models without a
price named once each, what the cache saved, and the calls whose usage was estimated or implausible."""

from __future__ import annotations

from decimal import Decimal

from pytest_llmjudge.gating.costs import CostTotal, case_cost, cost_of
from pytest_llmjudge.gating.panel_records import MemberRecord, PanelRecord
from pytest_llmjudge.gating.records import (
    CaseRecord,
    PairAnswerRecord,
    PairwiseRecord,
    ProducedOutput,
    SampleRecord,
)


def answer(order: str, cost: float | None) -> PairAnswerRecord:
    return PairAnswerRecord(order, "A", "A", cost_usd=cost)


def test_every_call_of_every_case_is_summed_and_so_is_what_the_cache_saved() -> None:
    judged = CaseRecord(
        "B1",
        "a",
        "pass",
        model="openai:judge",
        samples=(SampleRecord(0, True, cost_usd=0.1), SampleRecord(1, True, cost_usd=0.0, saved_usd=0.05)),
        produced=ProducedOutput("task", "x", "writer", cost_usd=0.2, saved_usd=0.03),
        usage_estimated=2,
        usage_implausible=1,
    )
    paired = CaseRecord(
        "B1",
        "b",
        "pass",
        pairwise=PairwiseRecord(
            "win", answers=(answer("candidate_first", 0.01), answer("baseline_first", 0.02))
        ),
        produced=ProducedOutput("task", "y", "writer", cost_usd=0.4),
        usage_estimated=3,
        usage_implausible=4,
    )
    quiet = CaseRecord("B1", "c", "pass", samples=(SampleRecord(0, True, cost_usd=0.001),))
    total = cost_of([judged, paired, quiet])
    assert total == CostTotal(Decimal("0.731"), Decimal("0.08"), (), 5, 5)
    assert total.known == Decimal("0.731") and total.text() == "$0.731"


def test_the_task_call_alone_is_counted_with_its_saving() -> None:
    cached_task = ProducedOutput("task cache", "x", "writer", cost_usd=0.0, saved_usd=0.25)
    fresh_task = ProducedOutput("task", "y", "writer", cost_usd=0.5, saved_usd=None)
    total = cost_of(
        [
            CaseRecord("B", "a", "pass", produced=cached_task),
            CaseRecord("B", "b", "pass", produced=fresh_task),
        ]
    )
    assert (total.usd, total.saved, total.unpriced) == (Decimal("0.5"), Decimal("0.25"), ())


def test_models_without_a_price_are_named_once_in_the_order_first_seen() -> None:
    unpriced = SampleRecord(0, True, cost_usd=None)
    panel = PanelRecord(
        "majority",
        2,
        "pass",
        False,
        (MemberRecord("m:priced", True), MemberRecord("m:free", True, cost_usd=None)),
    )
    records = [
        CaseRecord("B", "a", "pass", model="m:judge", samples=(unpriced, unpriced)),
        CaseRecord("B", "b", "pass", model="m:panel", samples=(unpriced,), panel=panel),
        CaseRecord("B", "c", "pass", produced=ProducedOutput("task", "x", "m:writer", cost_usd=None)),
        CaseRecord("B", "d", "pass", produced=ProducedOutput("task", "x", None, cost_usd=None)),
        CaseRecord("B", "e", "pass", samples=(SampleRecord(0, True, cost_usd=0.5),)),
        CaseRecord(
            "B",
            "f",
            "pass",
            model="m:pair",
            pairwise=PairwiseRecord("win", answers=(answer("candidate_first", None),)),
        ),
    ]
    total = cost_of(records)
    assert total.unpriced == ("m:judge", "m:free", "m:writer", "task", "m:pair")
    assert total.known is None and total.text() == "$0.50 + unknown"


def test_the_notes_say_why_usage_was_estimated_or_implausible() -> None:
    assert CostTotal(estimated=3).notes() == [
        "the judge server did not report usage for 3 call(s) (none, zero or negative): their tokens "
        "are estimated from the characters sent and answered, 4 a token, and a budget counts them"
    ]
    assert CostTotal(implausible=2).notes() == [
        "the judge server reported implausible usage for 2 call(s) (more than 10,000,000 tokens in one "
        "response, beyond any model's context): counted as reported, so a budget still holds; check "
        "what the server reports"
    ]
    assert CostTotal().notes() == []


def test_a_case_counts_what_its_cached_task_output_saved() -> None:
    samples = [SampleRecord(0, True, cost_usd=0.001, saved_usd=0.002)]
    task = ProducedOutput("task cache", "x", "writer", cost_usd=0.0, saved_usd=0.004)
    assert case_cost(samples, task) == (0.001, 0.006)
    assert case_cost(samples, None) == (0.001, 0.002)
