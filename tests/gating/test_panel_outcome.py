"""A panel case's outcome from its members' samples, without a run: each member's samples reduced,
the vote, the reason listing every member, the usage, attempts and latency of every call, the
judge label naming the rule and members, and an ERROR that names who failed when too few answered."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from pytest_llmjudge.gating.panel import MemberVerdict, pair_panel_reason
from pytest_llmjudge.gating.panel_outcome import combine_panel, member_verdict
from pytest_llmjudge.gating.panel_records import MemberRecord, PanelRecord, panel_record
from pytest_llmjudge.judging.verdict import JudgeFailure, Outcome, Usage, Verdict
from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Benchmark, BenchmarkSpec
from pytest_llmjudge.suite.settings import RunSettings

BENCHMARK = Benchmark(BenchmarkSpec(code="B1"), Location("b.yaml", 1, 1), (), None)
SETTINGS = RunSettings()


def judged(model: str, passed: bool, reason: str = "", **fields: object) -> Outcome:
    return Outcome(Verdict(passed, reason), model=model, **fields)  # type: ignore[arg-type]


def failed(model: str, kind: str, message: str, **fields: object) -> Outcome:
    return Outcome(None, JudgeFailure(kind, message), model=model, **fields)  # type: ignore[arg-type]


def test_a_member_verdict_carries_its_pass_reason_error_and_cache() -> None:
    assert member_verdict(judged("a", True, "fine", cached=True)) == MemberVerdict(
        "a", True, "fine", None, True
    )
    assert member_verdict(failed("b", "http-500", "down")) == MemberVerdict(
        "b", None, "", "http-500: down", False
    )


def test_a_majority_passes_and_the_reason_lists_every_member() -> None:
    members = [
        [judged("a", True, "polite", attempts=2, usage=Usage(1, 100, 10, cost=Decimal("0.1")), latency=1.5)],
        [judged("b", False, "rude", usage=Usage(1, 50, 5, cost=Decimal("0.2")), latency=0.5)],
        [judged("c", True, "kind", usage=Usage(1, 10, 1, cost=Decimal("0.3")), retried=("timeout",))],
    ]
    outcome = combine_panel(BENCHMARK, members, "majority", 2, SETTINGS)
    assert outcome.verdict == Verdict(
        True, "panel: 2 of 3 judges pass (majority)\n  a: pass: polite\n  b: fail: rude\n  c: pass: kind"
    )
    assert outcome.failure is None and outcome.verdict is not None and not outcome.verdict.uncertain
    assert outcome.model == "panel(majority, 2 of 3): a, b, c"
    assert outcome.usage == Usage(3, 160, 16, cost=Decimal("0.6"))
    assert outcome.latency == 2.0 and outcome.retried == ("timeout",)
    assert outcome.attempts == 2  # one call, plus a's retry
    assert not outcome.cached and [m.model for m in outcome.members] == ["a", "b", "c"]


def test_an_even_split_is_uncertain_and_fails() -> None:
    members = [[judged("a", True)], [judged("b", False)]]
    outcome = combine_panel(BENCHMARK, members, "majority", 1, SETTINGS)
    assert outcome.verdict is not None
    assert (outcome.verdict.passed, outcome.verdict.uncertain) == (False, True)


def test_a_fully_cached_panel_made_no_call() -> None:
    members = [[judged("a", True, cached=True, attempts=0)], [judged("b", True, cached=True, attempts=0)]]
    outcome = combine_panel(BENCHMARK, members, "unanimous", 2, SETTINGS)
    assert outcome.cached and outcome.attempts == 0 and outcome.latency is None
    assert outcome.verdict is not None and outcome.verdict.passed
    half = combine_panel(BENCHMARK, [members[0], [judged("b", True, attempts=3)]], "unanimous", 2, SETTINGS)
    assert not half.cached and half.attempts == 3  # one call plus b's two retries


def test_too_few_answers_is_an_error_naming_the_members_that_failed() -> None:
    members = [
        [judged("a", True)],
        [failed("b", "http-400", "bad request")],
        [failed("c", "http-400", "bad request")],
    ]
    outcome = combine_panel(BENCHMARK, members, "majority", 2, SETTINGS)
    assert outcome.verdict is None
    assert outcome.failure == JudgeFailure(
        "http-400", "only 1 of 3 panel judges answered, 2 needed: b, c: http-400: bad request"
    )
    assert outcome.model == "panel(majority, 2 of 3): a, b, c"


def test_each_members_samples_reduce_to_its_verdict_first() -> None:
    a_samples = [judged("a", True, "x"), judged("a", False, "y"), judged("a", False, "z")]
    b_samples = [judged("b", True, "ok")]
    outcome = combine_panel(BENCHMARK, [a_samples, b_samples], "any", 1, SETTINGS)
    assert outcome.verdict is not None and outcome.verdict.passed  # b passes; a's majority fails
    first = outcome.members[0]
    assert first.verdict is not None and not first.verdict.passed and len(first.samples) == 3
    assert outcome.verdict.reason.splitlines()[0] == "panel: 1 of 2 judges pass (any)"


def test_a_panel_case_record_keeps_each_members_verdict_tokens_and_cost() -> None:
    members = [
        [judged("a", True, "polite", cached=True, usage=Usage(1, 100, 10, cost=Decimal("0.25")))],
        [judged("b", False, "rude", usage=Usage(1, 50, 5))],  # tokens without a price
        [failed("c", "timeout", "slow")],
    ]
    outcome = combine_panel(BENCHMARK, members, "majority", 2, SETTINGS)
    record = panel_record(outcome, "majority", 2)
    assert record == PanelRecord(
        "majority",
        2,
        "uncertain",
        True,
        (
            MemberRecord("a", True, "polite", None, True, 1, 100, 10, 0.25),
            MemberRecord("b", False, "rude", None, False, 1, 50, 5, None),
            MemberRecord("c", None, "", "timeout: slow", False, 1, 0, 0, 0.0),
        ),
    )
    assert record.unpriced() == ["b"]
    sampled = panel_record(combine_panel(BENCHMARK, [[judged("a", True)] * 3], "any", 1, SETTINGS), "any", 1)
    assert sampled.members[0].samples == 3 and (sampled.decision, sampled.split) == ("pass", False)


def test_a_panel_record_travels_as_plain_values_and_back() -> None:
    member = MemberRecord("a", False, "why", "err", True, 2, 10, 3, 0.5, "loss")
    record = PanelRecord("unanimous", 1, "fail", False, (member,))
    assert record.to_results() == {
        "rule": "unanimous",
        "min_members": 1,
        "decision": "fail",
        "split": False,
        "members": [
            {
                "model": "a",
                "pass": False,
                "reason": "why",
                "error": "err",
                "cached": True,
                "samples": 2,
                "input_tokens": 10,
                "output_tokens": 3,
                "outcome": "loss",
            }
        ],
    }
    assert PanelRecord.from_dict(dataclasses.asdict(record)) == record
    with_extra = dataclasses.asdict(record)
    with_extra["members"][0]["added_later"] = 1  # a newer worker's field is left out
    assert PanelRecord.from_dict(with_extra) == record
    assert PanelRecord.from_dict({**with_extra, "members": [member]}) == record
    assert (
        PanelRecord.from_dict({"rule": "any", "min_members": 1, "decision": "error", "split": False}).members
        == ()
    )


def test_a_pairwise_panel_reason_counts_outcomes_and_names_errors() -> None:
    members = [("a", "win", "better", None), ("b", "win", "", None), ("c", None, "", "http-500: down")]
    assert pair_panel_reason(members, "win", "majority") == (
        "win: panel (majority): 2 win, 1 errored\n  a: win: better\n  b: win:\n  c: ERROR http-500: down"
    )
    assert pair_panel_reason([("a", None, "", None)], "inconsistent", "any") == (
        "inconsistent: panel (any): no answer, 1 errored\n  a: ERROR"
    )
    mixed = [("a", "loss", "worse", None), ("b", "tie", "same", None)]
    assert pair_panel_reason(mixed, "loss", "unanimous") == (
        "loss: panel (unanimous): 1 loss, 1 tie\n  a: loss: worse\n  b: tie: same"
    )


def test_the_first_failing_members_kind_names_the_error_and_answers_alone_can_be_too_few() -> None:
    members = [[judged("a", True)], [failed("b", "http-400", "bad")], [failed("c", "timeout", "slow")]]
    outcome = combine_panel(BENCHMARK, members, "majority", 2, SETTINGS)
    assert outcome.failure is not None and outcome.failure.kind == "http-400"
    answered = combine_panel(BENCHMARK, [[judged("a", True)], [judged("b", True)]], "majority", 3, SETTINGS)
    assert answered.failure == JudgeFailure("judge-error", "only 2 of 2 panel judges answered, 3 needed: ")


def test_a_member_with_two_samples_is_reduced_before_the_vote() -> None:
    two = [judged("a", True, "yes"), judged("a", False, "no")]  # a tie of two samples fails
    outcome = combine_panel(BENCHMARK, [two], "any", 1, SETTINGS)
    assert outcome.verdict is not None and not outcome.verdict.passed
