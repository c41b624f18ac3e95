"""How the run's settings reach each of its gates: a run over its budget fails and says so last,
``fail_on`` decides mixed judges, a change of judge and a pairwise benchmark, the pairwise figures
and the baseline's notes travel with the gates, and only the verdicts a comparison pairs count."""

from __future__ import annotations

from dataclasses import replace

from pytest_llmjudge.gating.drift import SeenJudge
from pytest_llmjudge.gating.records import CaseRecord, PairwiseRecord, SampleRecord
from pytest_llmjudge.gating.run_verdict import (
    NOTHING_FAILED,
    GateSettings,
    RunGates,
    decide_run,
    gate_run,
    release_verdicts_of_results,
)

OVER = "the run spent $0.52 of its $0.50 budget"


def case(code: str, case_id: str, result: str, **fields: object) -> CaseRecord:
    return CaseRecord(code, case_id, result, nodeid=f"{code}::{case_id}", threshold=0.5, **fields)  # type: ignore[arg-type]


def cases(code: str, passed: int, failed: int, **fields: object) -> list[CaseRecord]:
    made = [case(code, f"p{i}", "pass", **fields) for i in range(passed)]
    return made + [case(code, f"f{i}", "fail", **fields) for i in range(failed)]


def test_a_run_over_its_budget_fails_and_says_so_last() -> None:
    records = cases("B1", 9, 1)
    gates = gate_run(records, GateSettings())
    clean = decide_run(
        RunGates(()), 0, broken=False, snapshot_failed=False, failed_nodeids=(), records=(), over_budget=OVER
    )
    assert (clean.status, clean.reasons, clean.tolerated) == (1, (OVER,), frozenset())
    assert NOTHING_FAILED not in clean.reasons
    tolerated = decide_run(
        gates,
        1,
        broken=False,
        snapshot_failed=False,
        failed_nodeids={"B1::f0"},
        records=records,
        over_budget=OVER,
    )
    assert tolerated.gates is gates
    assert tolerated.status == 1 and tolerated.tolerated == {"B1::f0"} and not tolerated.failures_tolerated
    assert tolerated.reasons == (
        "1 failing case(s) of B1 are within its gate (pass rate 90.0%, needs 50%)",
        OVER,
    )
    interrupted = decide_run(
        RunGates(()), 2, broken=False, snapshot_failed=False, failed_nodeids=(), records=(), over_budget=OVER
    )
    assert interrupted.status == 2 and interrupted.reasons[-1] == OVER


def judged(code: str, case_id: str, snapshot: str) -> CaseRecord:
    sample = SampleRecord(0, True, answered_model=snapshot)
    return case(code, case_id, "pass", model="openai:j", samples=(sample,))


def test_fail_on_makes_a_benchmark_of_mixed_judges_untrusted() -> None:
    records = [judged("B1", "a", "j-1"), judged("B1", "b", "j-2")]
    (strict,) = gate_run(records, GateSettings(fail_on="regression")).benchmarks
    assert strict.status == "untrusted"
    (said,) = gate_run(records, GateSettings()).benchmarks
    assert said.status == "pass"


def test_a_change_of_judge_is_said_and_fails_the_gate_under_fail_on() -> None:
    records = [judged("B1", str(i), "j-2") for i in range(4)]
    old = SeenJudge("openai:j", "j-1", None, 4)
    baseline = {
        "benchmarks": [
            {
                "code": "B1",
                "judges": [old.to_json()],
                "cases": [{"id": str(i), "result": "pass", "calibration": False} for i in range(4)],
            }
        ]
    }
    change = (
        "B1: judge changed: baseline judged by openai:j answered as j-1, this run by openai:j answered as j-2"
    )
    strict = gate_run(records, GateSettings(fail_on="regression", baseline=True), baseline=baseline)
    assert strict.notes[0].startswith(change + "; compare runs of one judge")
    (gate,) = strict.benchmarks
    assert gate.status == "fail" and gate.regression.startswith("judge changed: ")
    loose = gate_run(records, GateSettings(baseline=True), baseline=baseline)
    assert loose.notes[0].startswith(change + " (fails under --llmjudge-fail-on); ")
    assert loose.benchmarks[0].status == "pass"


def test_a_significant_regression_fails_only_under_fail_on_regression() -> None:
    before = cases("B1", 30, 0)
    now = [replace(r, result="fail") if r.case in {f"p{i}" for i in range(12)} else r for r in before]
    baseline = {
        "benchmarks": [
            {
                "code": "B1",
                "cases": [{"id": r.case, "result": r.result, "calibration": False} for r in before],
            }
        ]
    }
    worse = gate_run(now, GateSettings(fail_on="worse", baseline=True), baseline=baseline)
    assert worse.comparisons is not None and worse.comparisons[0].verdict == "regression"
    assert worse.benchmarks[0].regression == "" and worse.benchmarks[0].status == "pass"
    # a benchmark whose cases all errored now is compared with none of its verdicts
    errored = [replace(r, result="error") for r in before]
    gates = gate_run(errored, GateSettings(baseline=True), baseline=baseline)
    assert gates.comparisons is not None and gates.comparisons[0].n_paired == 0
    assert gates.flips == ()


def pair(case_id: str, outcome: str) -> CaseRecord:
    result = "fail" if outcome == "loss" else "pass"
    return case("P", case_id, result, pairwise=PairwiseRecord(outcome))


def test_the_pairwise_benchmarks_follow_fail_on_margin_and_alpha() -> None:
    losses = [pair(str(i), "loss") for i in range(6)]  # sign test p = 0.03125
    gates = gate_run(losses, GateSettings(fail_on="worse"))
    assert gates.pairwise is not None and gates.pairwise[0].verdict == "worse"
    assert gates.benchmarks[0].status == "fail"
    assert gate_run(losses, GateSettings(fail_on="worse", alpha=0.01)).benchmarks[0].status == "pass"
    even = [pair(str(i), "win") for i in range(5)] + [pair(str(i), "loss") for i in range(5, 10)]
    (loose,) = gate_run(even, GateSettings(margin=0.3)).pairwise or ()
    (tight,) = gate_run(even, GateSettings(margin=0.05)).pairwise or ()
    assert loose.non_inferior and not tight.non_inferior


def test_a_pairwise_case_of_the_baseline_is_not_a_verdict_to_compare() -> None:
    results = {
        "benchmarks": [
            {
                "code": "B1",
                "cases": [
                    {"id": "a", "result": "pass", "calibration": False},
                    {"id": "b", "result": "pass", "calibration": False, "pairwise": {"outcome": "win"}},
                    {"id": "c", "result": "fail", "calibration": False, "pairwise": None},
                ],
            }
        ]
    }
    assert release_verdicts_of_results(results) == {"B1": {"a": True, "c": False}}
