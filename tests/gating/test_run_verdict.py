"""The run's verdict from its records alone: each benchmark's gate rule, the baseline comparison
and its flips, the calibration's say, and the exit status once every plugin has finished."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_llmjudge.gating.calibration_run import calibrate
from pytest_llmjudge.gating.records import CaseRecord, JudgeFacts
from pytest_llmjudge.gating.run_verdict import (
    Flip,
    GateSettings,
    RunGates,
    after_other_plugins,
    decide_run,
    flips_between,
    gate_run,
    regression_detail,
    release_verdicts,
    release_verdicts_of_results,
)
from pytest_llmjudge.gating.statistics import compare_paired
from pytest_llmjudge.suite.files import RubricSpec


def case(code: str, case_id: str, result: str, **fields: object) -> CaseRecord:
    return CaseRecord(
        code,
        case_id,
        result,
        nodeid=f"{code}::{case_id}",
        threshold=0.5,
        **fields,  # type: ignore[arg-type]
    )


def cases(code: str, passed: int, failed: int, **fields: object) -> list[CaseRecord]:
    made = [case(code, f"p{i}", "pass", **fields) for i in range(passed)]
    return made + [case(code, f"f{i}", "fail", **fields) for i in range(failed)]


def results_file(records: list[CaseRecord]) -> dict[str, object]:
    """The part of a results file that a baseline is read from."""
    codes = list(dict.fromkeys(r.benchmark for r in records))
    return {
        "benchmarks": [
            {
                "code": code,
                "cases": [
                    {"id": r.case, "result": r.result, "calibration": r.calibration}
                    for r in records
                    if r.benchmark == code
                ],
            }
            for code in codes
        ]
    }


def test_release_verdicts_leave_calibration_cases_and_errors_out() -> None:
    records = [
        case("B1", "a", "pass"),
        case("B1", "b", "fail"),
        case("B1", "c", "error"),
        case("B1", "d", "skip"),
        case("B1", "a", "fail", calibration=True),  # a calibration item may share a release case's id
        case("B2", "x", "fail"),
    ]
    expected = {"B1": {"a": True, "b": False}, "B2": {"x": False}}
    assert release_verdicts(records) == expected
    assert release_verdicts_of_results(results_file(records)) == expected


def test_flips_are_the_cases_whose_verdict_changed_in_the_order_of_now() -> None:
    before = {"B1": {"a": True, "b": False, "c": True}, "B2": {"x": True}}
    now = {"B2": {"x": False}, "B1": {"c": True, "b": True, "a": False, "new": False}, "B3": {"y": True}}
    flips = flips_between(before, now)
    assert flips == (
        Flip("B2", "x", "pass", "fail"),
        Flip("B1", "b", "fail", "pass"),
        Flip("B1", "a", "pass", "fail"),
    )
    assert flips[0].to_dict() == {"benchmark": "B2", "case": "x", "baseline": "pass", "candidate": "fail"}


def test_the_regression_detail() -> None:
    comparison = replace(compare_paired({"a": True, "b": True}, {"a": False, "b": True}), p_adjusted=0.01234)
    assert regression_detail(comparison) == (
        "regression against the baseline: 1 case(s) pass → fail, 0 fail → pass "
        "(McNemar p = 0.0123 Holm-adjusted)"
    )


@pytest.mark.parametrize(
    ("run_rule", "own_rule", "evaluator", "applied"),
    [
        ("point", "", "llm_judge", "point"),
        ("lower_bound", "", "llm_judge", "lower_bound"),
        ("lower_bound", "point", "llm_judge", "point"),  # the benchmark's own rule wins
        ("corrected", "", "hybrid", "corrected"),
        ("corrected", "", "code", "point"),  # code checks have no judge errors to correct
        ("point", "corrected_lower_bound", "code", "lower_bound"),
    ],
)
def test_each_benchmark_gets_its_rule(run_rule: str, own_rule: str, evaluator: str, applied: str) -> None:
    judge = JudgeFacts(evaluator_type=evaluator, gate=own_rule)
    records = [case("B0", "z", "pass"), *cases("B1", 3, 1, judge=judge)]
    gates = gate_run(records, GateSettings(gate=run_rule))
    rules = {g.code: g.gate_rule for g in gates.benchmarks}
    # a benchmark without judge facts (B0) is taken for a judged one: the run's rule
    assert rules == {"B0": run_rule, "B1": applied}


def test_a_gate_counts_each_benchmarks_collected_cases() -> None:
    records = cases("B1", 3, 0, benchmark_cases=4)
    (gate,) = gate_run(records, GateSettings()).benchmarks
    assert (gate.collected, gate.status) == (4, "partial")


def test_without_a_baseline_nothing_is_compared() -> None:
    gates = gate_run(cases("B1", 3, 1), GateSettings())
    assert (gates.comparisons, gates.flips, gates.notes, gates.rubrics, gates.calibrations) == (
        None,
        None,
        (),
        (),
        (),
    )


def test_an_unread_baseline_fails_every_gate_under_fail_on_regression() -> None:
    gates = gate_run(
        cases("B1", 4, 0), GateSettings(fail_on="regression", baseline=True), baseline_error="gone"
    )
    (gate,) = gates.benchmarks
    assert gate.status == "fail" and gate.regression == "regression not checked: gone"
    assert gates.notes == (
        "regression not checked: gone: every gate fails under --llmjudge-fail-on regression",
    )
    (plain,) = gate_run(cases("B1", 4, 0), GateSettings(baseline=True)).benchmarks
    assert plain.regression == "regression not checked: --llmjudge-baseline: not read"


BEFORE = cases("B1", 30, 0) + cases("B2", 3, 0)
NOW = [
    replace(r, result="fail") if r.case in {f"p{i}" for i in range(12)} and r.benchmark == "B1" else r
    for r in BEFORE
] + cases("B3", 1, 0)


def test_a_significant_regression_fails_its_gate_under_fail_on_regression() -> None:
    gates = gate_run(NOW, GateSettings(fail_on="regression", baseline=True), baseline=results_file(BEFORE))
    b1, b2, b3 = gates.benchmarks
    assert gates.comparisons is not None
    assert [c.benchmark for c in gates.comparisons] == ["B1", "B2"]  # B3 is not in the baseline
    regression = gates.comparisons[0]
    assert regression.verdict == "regression" and regression.b == 12
    assert b1.status == "fail" and b1.regression == regression_detail(regression)
    assert gates.detail("B1") == regression_detail(regression)
    assert (b2.regression, b3.regression, gates.detail("B9")) == ("", "", "")
    assert gates.flips == tuple(Flip("B1", f"p{i}", "pass", "fail") for i in range(12))


def test_a_regression_is_only_reported_without_fail_on_regression() -> None:
    gates = gate_run(NOW, GateSettings(baseline=True), baseline=results_file(BEFORE))
    assert gates.comparisons is not None and gates.comparisons[0].verdict == "regression"
    assert all(not g.regression for g in gates.benchmarks)


def test_the_comparison_follows_margin_and_alpha() -> None:
    """30 unchanged cases: the smallest detectable change is 6 of 30 at alpha 0.05, 3 of 30 at 0.5."""
    same = cases("B1", 30, 0)

    def verdict(margin: float, alpha: float) -> str:
        gates = gate_run(same, GateSettings(margin=margin, alpha=alpha), baseline=results_file(same))
        assert gates.comparisons is not None
        return gates.comparisons[0].verdict

    assert verdict(0.25, 0.05) == "no significant change"
    assert verdict(0.15, 0.05) == "inconclusive"
    assert verdict(0.15, 0.5) == "no significant change"


def test_the_calibration_and_rubrics_have_their_say() -> None:
    records = cases("B1", 9, 1, min_labels=5) + cases("B2", 1, 1)
    calibrations = calibrate(records, None)
    rubric = RubricSpec(code="R-ONE", benchmarks=["B1", "B2"], passing_threshold=0.9)
    gates = gate_run(records, GateSettings(), calibrations=calibrations, rubrics=[rubric])
    b1, b2 = gates.benchmarks
    assert (b1.status, b1.detail, b2.status) == ("untrusted", "judge untrusted: 0 labels < 5", "pass")
    assert gates.calibrations == tuple(calibrations)
    (rubric_gate,) = gates.rubrics
    assert (rubric_gate.code, rubric_gate.status) == ("R-ONE", "fail")


def test_decide_run_gives_the_exit_status_and_reasons() -> None:
    records = cases("B1", 9, 1)
    gates = gate_run(records, GateSettings())
    tolerated = decide_run(
        gates, 1, broken=False, snapshot_failed=False, failed_nodeids={"B1::f0"}, records=records
    )
    assert (tolerated.status, tolerated.tolerated, tolerated.failures_tolerated) == (0, {"B1::f0"}, True)
    assert tolerated.reasons == ("1 failing case(s) of B1 are within its gate (pass rate 90.0%, needs 50%)",)
    assert tolerated.gates is gates
    broken = decide_run(
        gates, 1, broken=True, snapshot_failed=False, failed_nodeids={"B1::f0"}, records=records
    )
    assert (broken.status, broken.failures_tolerated) == (1, False)
    assert broken.reasons == ("a benchmark or rubric file did not load (errors above)",)
    snapshot = decide_run(gates, 1, broken=False, snapshot_failed=True, failed_nodeids=set(), records=records)
    assert snapshot.reasons == ("compiled judge requests differ from their snapshots (see snapshot report)",)
    clean = decide_run(RunGates(()), 0, broken=False, snapshot_failed=False, failed_nodeids=(), records=())
    assert (clean.status, clean.reasons, clean.failures_tolerated) == (
        0,
        ("no gate failed, no item failed or errored",),
        False,
    )


def test_another_plugin_that_fails_the_session_is_obeyed_and_said() -> None:
    verdict = decide_run(RunGates(()), 0, broken=False, snapshot_failed=False, failed_nodeids=(), records=())
    assert after_other_plugins(verdict, 0, 0) is verdict
    later = after_other_plugins(verdict, 0, 1)
    assert later.status == 1
    assert later.reasons == (
        "no gate failed, no item failed or errored",
        "pytest's exit status became 1 after the gates were decided: another plugin failed the session "
        "(syrupy does for unused snapshots; see its report)",
    )
    lowered = after_other_plugins(replace(verdict, status=2), 1, 0)
    assert lowered.status == 2  # never lowered
