"""Pairwise gates, records and answers without pytest: what the figures decide, what travels."""

from __future__ import annotations

from dataclasses import asdict, replace

import pytest

from pytest_llmjudge.gating.exit_status import decide_exit
from pytest_llmjudge.gating.gates import BenchmarkGate, why
from pytest_llmjudge.gating.pairwise_gates import PairwiseRules, pairwise_gate, pairwise_gates
from pytest_llmjudge.gating.pairwise_stats import benchmark_figures
from pytest_llmjudge.gating.records import CaseRecord, PairAnswerRecord, PairwiseRecord
from pytest_llmjudge.judging.pairwise_judge import read_pairwise_text
from pytest_llmjudge.judging.pairwise_verdict import PairwiseVerdict, majority_answer
from pytest_llmjudge.judging.verdict import JudgeFailure


def gate(**fields: object) -> BenchmarkGate:
    values: dict[str, object] = {
        "code": "P",
        "label": "",
        "cases": 10,
        "passed": 7,
        "failed": 3,
        "errors": 0,
        "skipped": 0,
        "review": 0,
        "threshold": 0.9,  # a pairwise gate ignores it: 70% would fail it
        "criticality": "threshold_gate",
        "weight": 1.0,
        "parent_rubric": None,
    }
    values.update(fields)
    return BenchmarkGate(**values)  # type: ignore[arg-type]


def figures(  # type: ignore[no-untyped-def]
    wins: int, losses: int, ties: int = 0, consistent: int = 0, judged: int = 0, margin: float = 0.05
):
    outcomes = ["win"] * wins + ["loss"] * losses + ["tie"] * ties
    agreed = [True] * consistent + [False] * (judged - consistent)
    return benchmark_figures(outcomes, benchmark="P", consistent=agreed, margin=margin)


WORSE = figures(0, 10, judged=10, consistent=10)  # p = 0.002
EVEN = figures(5, 5, judged=10, consistent=10)


@pytest.mark.parametrize(
    ("figures_", "rules", "status", "detail"),
    [
        (WORSE, PairwiseRules(fail_on_worse=True), "fail", "significantly worse than the baseline: 0 win(s)"),
        (WORSE, PairwiseRules(), "not scored", "pairwise: worse; not gated"),
        (EVEN, PairwiseRules(fail_on_worse=True), "pass", ""),
        (EVEN, PairwiseRules(gate="non_inferior"), "fail", "win rate lower bound 23.7% below 45.0%"),
        (
            figures(5, 5, judged=10, consistent=10, margin=0.3),
            PairwiseRules(gate="non_inferior", margin=0.3),
            "pass",
            "",
        ),
        (EVEN, PairwiseRules(min_consistency=1.0), "pass", ""),
        (
            figures(5, 5, judged=10, consistent=7),
            PairwiseRules(min_consistency=0.8),
            "untrusted",
            "70.0% of 10 pairs",
        ),
        (figures(0, 0, ties=3), PairwiseRules(min_consistency=0.8), "untrusted", "not measured"),
        # a worse candidate fails whatever the trust: nothing excuses it
        (
            figures(0, 10, judged=10),
            PairwiseRules(fail_on_worse=True, min_consistency=0.8),
            "fail",
            "significantly",
        ),
    ],
)
def test_what_a_pairwise_gate_decides(figures_, rules, status, detail) -> None:  # type: ignore[no-untyped-def]
    decided = pairwise_gate(gate(), figures_, rules)
    assert decided.gate_rule == "pairwise"
    assert decided.status == status
    assert why(decided).startswith(detail) or detail in why(decided)


def test_no_paired_outcome_decides_nothing_and_a_partial_run_stays_partial() -> None:
    empty = pairwise_gate(
        gate(cases=2, passed=0, failed=0, skipped=2), figures(0, 0), PairwiseRules(fail_on_worse=True)
    )
    assert empty.status == "no verdicts"
    partial = pairwise_gate(gate(collected=20), EVEN, PairwiseRules(fail_on_worse=True))
    assert partial.status == "partial"
    worse = pairwise_gate(gate(collected=20), WORSE, PairwiseRules(fail_on_worse=True))
    assert worse.status == "fail"  # significantly worse already: no further case can change that


def record(case: str, outcome: str | None, **pair: object) -> CaseRecord:
    result = {"win": "pass", "tie": "pass", "inconsistent": "pass", "loss": "fail", None: "skip"}[outcome]
    return CaseRecord("P", case, result, nodeid=f"P::{case}", pairwise=PairwiseRecord(outcome, **pair))  # type: ignore[arg-type]


def test_figures_come_from_the_records_and_travel_into_every_gate() -> None:
    records = [
        record("a", "win", consistent=True, baseline_only=("gone",)),
        record("b", "loss", consistent=True, baseline_only=("gone",)),
        record("c", "inconsistent", consistent=False, baseline_only=("gone",)),
        record("d", "tie", identical=True, baseline_only=("gone",)),
        record("e", None, unpaired=True, baseline_only=("gone",)),
        CaseRecord("S", "single", "pass", nodeid="S::single"),
    ]
    gates = [gate(cases=5, passed=3, failed=1, skipped=1), gate(code="S", cases=1, passed=1, failed=0)]
    decided, found = pairwise_gates(records, gates, fail_on="worse", margin=0.05, alpha=0.05)
    assert found is not None
    (p,) = found
    assert (p.wins, p.losses, p.ties, p.inconsistent, p.unpaired, p.n) == (1, 1, 1, 1, 2, 4)
    assert (p.judged, p.position_consistency) == (3, 2 / 3)
    assert decided[0].gate_rule == "pairwise" and decided[0].status == "pass"
    assert decided[1] == gates[1]  # judged case by case: untouched
    assert pairwise_gates(records[-1:], gates[1:], fail_on=None, margin=0.05, alpha=0.05) == (
        [gates[1]],
        None,
    )


def test_losses_within_a_pairwise_gate_are_tolerated_and_said_so() -> None:
    records = [record("a", "win"), record("b", "loss")]
    decided = replace(gate(cases=2, passed=1, failed=1), gate_rule="pairwise", override="pass")
    exit_ = decide_exit(
        1,
        benchmarks=[decided],
        rubrics=[],
        broken=False,
        snapshot_failed=False,
        failed_nodeids={"P::b"},
        records=records,
    )
    assert exit_.status == 0
    assert exit_.reasons == ("1 case(s) of P lost to the baseline: are within its pairwise gate",)


def test_a_pairwise_record_travels_as_a_dict_and_back() -> None:
    answer = PairAnswerRecord(
        "candidate_first", "A", "B", "b is better", "ab" * 8, ("B", "B"), False, 2, 10, 3, 0.5
    )
    original = replace(
        record("x", "loss", consistent=True, baseline_output={"k": [1]}, baseline_source="case file"),
        pairwise=PairwiseRecord(
            "loss",
            False,
            True,
            False,
            {"k": [1]},
            "case file",
            (answer, answer),
            ("gone",),
            "non_inferior",
            0.8,
        ),
    )
    assert CaseRecord.from_dict(asdict(original)) == original
    assert original.pairwise is not None
    assert original.pairwise.to_results()["answers"][0]["sample_winners"] == ["B", "B"]


@pytest.mark.parametrize(
    ("winners", "expected"),
    [
        (["A"], "A"),
        (["A", "A", "B"], "A"),
        (["A", "B"], "tie"),
        (["A", "B", "tie"], "tie"),
        (["tie", "tie", "B"], "tie"),
    ],
)
def test_an_order_answer_is_its_samples_majority_else_a_tie(winners: list[str], expected: str) -> None:
    answers = [PairwiseVerdict(w, f"said {w}") for w in winners]  # type: ignore[arg-type]
    assert majority_answer(answers).winner == expected


@pytest.mark.parametrize(
    ("text", "winner"),
    [
        ('<reasoning>A cites more.</reasoning>\n{"winner": "A", "reason": "A is complete"}', "A"),
        ('<think>{"winner": "B", "reason": "draft"}</think>\n{"winner": "tie", "reason": "both"}', "tie"),
        ('prose {"note": 1} then {"winner": "B", "reason": "B"}', "B"),
    ],
)
def test_a_text_answer_is_its_last_json_object_with_a_winner(text: str, winner: str) -> None:
    assert read_pairwise_text(text).winner == winner


@pytest.mark.parametrize("text", ["", "no json", '{"winner": "a", "reason": "x"}', '{"winner": "A"}'])
def test_an_unreadable_text_answer_is_a_retried_failure(text: str) -> None:
    with pytest.raises(JudgeFailure) as caught:
        read_pairwise_text(text)
    assert caught.value.transient


def test_a_rubric_does_not_average_a_pairwise_benchmark_s_non_loss_rate() -> None:
    from pytest_llmjudge.gating.gates import rubric_gate

    pairwise = replace(gate(code="P"), gate_rule="pairwise", override="pass")
    single = gate(code="S", passed=10, failed=0)
    decided = rubric_gate("R", "", "MEAN", 0.9, ["P", "S"], {"P": pairwise, "S": single})
    assert (decided.status, decided.detail) == ("incomplete", "no verdicts for P (judged pairwise)")
