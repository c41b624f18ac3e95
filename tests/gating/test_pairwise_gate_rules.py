"""What a pairwise benchmark's gate says in the summary: a benchmark that paired no case fails and
names its baseline, one partly paired says its coverage, a judge that answers by position is
untrusted (by its own minimum or by the default ½), and each record's settings reach the gate."""

from __future__ import annotations

from dataclasses import replace

from pytest_llmjudge.gating.gates import BenchmarkGate, why
from pytest_llmjudge.gating.pairwise_gates import Pairing, PairwiseRules, pairwise_gate, pairwise_gates
from pytest_llmjudge.gating.pairwise_stats import PairwiseFigures, benchmark_figures
from pytest_llmjudge.gating.records import CaseRecord, PairAnswerRecord, PairwiseRecord

NOT_GATED = "not gated (--llmjudge-fail-on worse or pairwise_gate)"


def gate(**fields: object) -> BenchmarkGate:
    values: dict[str, object] = {
        "code": "P",
        "label": "",
        "cases": 10,
        "passed": 10,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
        "review": 0,
        "threshold": 0.9,
        "criticality": "threshold_gate",
        "weight": 1.0,
        "parent_rubric": None,
    }
    values.update(fields)
    return BenchmarkGate(**values)  # type: ignore[arg-type]


def figures(wins: int, losses: int, *, consistent: int = 10, judged: int = 10) -> PairwiseFigures:
    agreed = [True] * consistent + [False] * (judged - consistent)
    return benchmark_figures(["win"] * wins + ["loss"] * losses, benchmark="P", consistent=agreed)


EVEN = figures(5, 5)  # win rate 50%, its lower bound 23.7%: inconclusive
WORSE = figures(0, 10)


def test_a_benchmark_that_paired_no_case_fails_and_names_its_baseline() -> None:
    unpaired = gate(passed=0, skipped=4, cases=4)
    decided = pairwise_gate(
        unpaired, figures(0, 0), PairwiseRules(), Pairing(4, 0, "baseline old.json: no outputs")
    )
    assert decided.status == "fail"
    assert (
        why(decided)
        == "no case paired with the baseline (paired 0 of 4 cases): baseline old.json: no outputs"
    )
    bare = pairwise_gate(unpaired, figures(0, 0), PairwiseRules(), Pairing(4, 0))
    assert why(bare) == "no case paired with the baseline (paired 0 of 4 cases)"
    # no case at all is nothing to pair
    empty = pairwise_gate(gate(cases=0, passed=0), figures(0, 0), PairwiseRules(), Pairing(0, 0))
    assert empty.status == "no verdicts"


def test_a_gate_without_paired_outcomes_forgets_what_decided_it_before() -> None:
    earlier = gate(passed=0, skipped=10, override="fail", detail="an earlier verdict")
    decided = pairwise_gate(earlier, figures(0, 0), PairwiseRules(fail_on_worse=True))
    assert decided == replace(earlier, gate_rule="pairwise", override=None, detail="")
    assert decided.status == "no verdicts"


def test_a_partly_paired_benchmark_says_its_coverage_after_its_reason() -> None:
    gated = PairwiseRules(fail_on_worse=True)
    assert why(pairwise_gate(gate(), EVEN, gated, Pairing(12, 10))) == "paired 10 of 12 cases"
    assert why(pairwise_gate(gate(), EVEN, gated, Pairing(10, 10))) == ""
    assert why(pairwise_gate(gate(), EVEN, PairwiseRules(), Pairing(12, 10))) == (
        f"pairwise: inconclusive; {NOT_GATED}; paired 10 of 12 cases"
    )
    worse = pairwise_gate(gate(), WORSE, gated, Pairing(12, 10))
    assert worse.status == "fail"
    assert worse.regression.startswith("significantly worse than the baseline: 0 win(s), 10 loss(es)")
    assert worse.regression.endswith(" Holm-adjusted); paired 10 of 12 cases")
    # no paired outcome: nothing to cover
    unjudged = pairwise_gate(gate(passed=0, skipped=10), figures(0, 0), gated, Pairing(12, 10))
    assert why(unjudged) == "no case judged"
    assert Pairing(12, 10).coverage() == "paired 10 of 12 cases" and Pairing(3, 3).coverage() == ""


def test_a_judge_that_answers_by_position_is_untrusted_by_default() -> None:
    biased = pairwise_gate(gate(), figures(5, 5, consistent=2, judged=5), PairwiseRules())
    assert biased.status == "untrusted"
    assert why(biased) == (
        "judge position consistency 40.0% of 5 pairs, below judge.min_consistency 50% (its default)"
    )
    half = pairwise_gate(gate(), figures(5, 5, consistent=5, judged=10), PairwiseRules(fail_on_worse=True))
    assert half.status == "pass"  # exactly the default minimum is enough
    unmeasured = pairwise_gate(
        gate(), figures(5, 5, consistent=0, judged=0), PairwiseRules(fail_on_worse=True)
    )
    assert unmeasured.status == "pass"  # the default asks nothing of a judge never asked both orders


def test_the_benchmark_s_own_minimum_consistency_names_its_figures() -> None:
    strict = PairwiseRules(min_consistency=1.0)
    never = pairwise_gate(gate(), figures(5, 5, consistent=0, judged=4), strict)
    assert why(never) == "judge position consistency 0% of 4 pairs, below judge.min_consistency 100%"
    unmeasured = pairwise_gate(
        gate(), figures(5, 5, consistent=0, judged=0), PairwiseRules(min_consistency=0.8)
    )
    assert why(unmeasured) == (
        "judge position consistency not measured (no pair was judged in both orders), "
        "below judge.min_consistency 80.0%"
    )


def test_a_non_inferiority_gate_fails_whatever_the_pass_rate() -> None:
    decided = pairwise_gate(gate(), EVEN, PairwiseRules(gate="non_inferior"))
    assert decided.status == "fail"
    assert why(decided) == "win rate lower bound 23.7% below 45.0% (pairwise_gate: non_inferior)"


def test_a_partial_pairwise_run_is_partial_also_under_a_hard_gate() -> None:
    partial = pairwise_gate(
        gate(collected=20, failed=3, passed=7, criticality="hard_gate"),
        EVEN,
        PairwiseRules(fail_on_worse=True),
    )
    assert partial.status == "partial"


def pair(
    case: str, outcome: str | None, winners: tuple[str, str] | None = None, **fields: object
) -> CaseRecord:
    answers: tuple[PairAnswerRecord, ...] = ()
    if winners is not None:
        answers = (
            PairAnswerRecord("candidate_first", "A", winners[0]),
            PairAnswerRecord("baseline_first", "B", winners[1]),
        )
    record = PairwiseRecord(outcome, answers=answers, **fields)  # type: ignore[arg-type]
    result = "skip" if outcome is None else ("fail" if outcome == "loss" else "pass")
    return CaseRecord("P", case, result, pairwise=record)


def decide(records: list[CaseRecord], **kwargs: object) -> tuple[BenchmarkGate, PairwiseFigures]:
    options: dict[str, object] = {"fail_on": None, "margin": 0.05, "alpha": 0.05} | kwargs
    decided, found = pairwise_gates(records, [gate(cases=len(records))], **options)  # type: ignore[arg-type]
    assert found is not None
    return decided[0], found[0]


def test_position_counts_come_from_the_pairs_judged_in_both_orders() -> None:
    records = [
        pair("a", "win", ("A", "B"), consistent=True),
        pair("b", "tie", ("A", "A"), consistent=False),
        pair("c", "win", ("A", "tie")),  # one order only: no consistency, no positions
    ]
    _, found = decide(records)
    assert found.positions == (3, 1, 0)
    assert found.to_dict()["positions"] == {"A": 3, "B": 1, "tie": 0}


def test_each_record_s_gate_and_margin_decide_the_benchmark() -> None:
    records = [pair(str(i), "win") for i in range(5)] + [pair(str(i), "loss") for i in range(5, 10)]
    loose = [replace(r, pairwise=replace(r.pairwise, gate="non_inferior")) for r in records]  # type: ignore[type-var]
    decided, found = decide(loose, margin=0.3)
    assert found.non_inferior and decided.status == "pass"
    decided, _ = decide(loose, margin=0.1)
    assert decided.status == "fail"
    assert why(decided) == "win rate lower bound 23.7% below 40.0% (pairwise_gate: non_inferior)"
    decided, _ = decide(records)
    assert decided.status == "not scored"


def test_each_record_s_minimum_consistency_and_the_run_s_alpha_reach_the_gate() -> None:
    records = [pair(str(i), "win", consistent=i < 6, min_consistency=0.9) for i in range(8)]
    records += [
        pair("8", "loss", consistent=True, min_consistency=0.9),
        pair("9", "loss", consistent=True, min_consistency=0.9),
    ]
    decided, found = decide(records, alpha=0.2)
    assert found.verdict == "better"  # sign test p = 0.109, under the alpha asked for
    assert decided.status == "untrusted"
    assert why(decided) == "judge position consistency 80.0% of 10 pairs, below judge.min_consistency 90.0%"


def test_a_worse_candidate_fails_under_fail_on_worse() -> None:
    records = [pair(str(i), "loss") for i in range(10)]
    decided, _ = decide(records, fail_on="worse")
    assert decided.status == "fail" and decided.regression.startswith("significantly worse")
    decided, _ = decide(records, fail_on="regression")
    assert decided.status == "not scored"


def test_the_records_pairing_reaches_the_gate() -> None:
    one = [pair("a", None, unpaired=True, baseline_note="baseline old.json has no case a")]
    decided, _ = decide(one)
    assert (
        why(decided)
        == "no case paired with the baseline (paired 0 of 1 cases): baseline old.json has no case a"
    )
    partly = [pair("a", "win"), pair("b", "loss"), pair("c", None, unpaired=True)]
    decided, _ = decide(partly, fail_on="worse")
    assert why(decided) == "paired 2 of 3 cases"
