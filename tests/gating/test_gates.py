"""Benchmark and rubric gates from case records, case by case: the counts, the status and the
few words that say why (the same words in the terminal, JUnit, the results file and the report)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_llmjudge.gating.gates import (
    BenchmarkGate,
    RubricGate,
    aggregate,
    applied_rule,
    benchmark_gates,
    reference_errors,
    rubric_gate,
    rubric_gates,
    why,
)
from pytest_llmjudge.gating.records import CaseRecord, SampleRecord
from pytest_llmjudge.gating.statistics import case_rate_interval
from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Rubric, RubricSpec


@pytest.mark.parametrize(
    ("rule", "judged", "applied"),
    [
        ("point", True, "point"),
        ("lower_bound", False, "lower_bound"),
        ("corrected", True, "corrected"),
        ("corrected_lower_bound", True, "corrected_lower_bound"),
        # code checks alone have no judge errors to correct
        ("corrected", False, "point"),
        ("corrected_lower_bound", False, "lower_bound"),
    ],
)
def test_the_rule_a_benchmark_is_gated_by(rule: str, judged: bool, applied: str) -> None:
    assert applied_rule(rule, judged) == applied


def case(code: str, case_id: str, result: str, **fields: object) -> CaseRecord:
    return CaseRecord(code, case_id, result, nodeid=f"{code}::{case_id}", **fields)  # type: ignore[arg-type]


def test_benchmark_gates_count_each_result_in_first_seen_order() -> None:
    facts = dict(label="Billing", threshold=0.5, criticality="hard_gate", weight=2.0, parent_rubric="R1")
    records = [
        case("B2", "x", "pass"),
        case("B1", "a", "pass", uncertain=True, **facts),
        case(
            "B1",
            "b",
            "pass",
            flaky=True,
            samples=(SampleRecord(0, True), SampleRecord(1, False), SampleRecord(2, True)),
        ),
        case("B1", "c", "fail", uncertain=True),
        case("B1", "d", "error"),
        case("B1", "e", "error"),
        case("B1", "f", "skip"),
        case("B3", "", "skip"),  # a benchmark without cases is listed with none
    ]
    b2, b1, b3 = benchmark_gates(records, {"B1": 6, "B2": 3})
    assert b1 == BenchmarkGate(
        code="B1",
        label="Billing",
        cases=6,
        passed=2,
        failed=1,
        errors=2,
        skipped=1,
        review=2,
        threshold=0.5,
        criticality="hard_gate",
        weight=2.0,
        parent_rubric="R1",
        flaky=1,
        collected=6,
        interval=case_rate_interval(2, 3, 5),  # 3 case verdicts from 5 samples
    )
    assert (b2.cases, b2.passed, b2.collected, b2.partial) == (1, 1, 3, True)
    assert b2.interval == case_rate_interval(1, 1, 1)
    assert (b3.cases, b3.verdicts, b3.interval, b3.collected, b3.status) == (0, 0, None, None, "no verdicts")
    assert [g.collected for g in benchmark_gates(records)] == [None, None, None]


def gate(passed: int = 9, failed: int = 1, **fields: object) -> BenchmarkGate:
    values: dict[str, object] = dict(
        code="B1",
        label="",
        cases=passed + failed,
        passed=passed,
        failed=failed,
        errors=0,
        skipped=0,
        review=0,
        threshold=0.8,
        criticality="threshold_gate",
        weight=1.0,
        parent_rubric=None,
    )
    values.update(fields)
    made = BenchmarkGate(**values)  # type: ignore[arg-type]
    if made.verdicts and "interval" not in fields:
        made = replace(made, interval=case_rate_interval(made.passed, made.verdicts))
    return made


GATES = {
    "at the threshold passes": (gate(8, 2), "pass", ""),
    "below the threshold fails": (gate(7, 3), "fail", "pass rate 70.0% below 80.0%"),
    "a whole rate is shown whole": (gate(0, 2, threshold=1.0), "fail", "pass rate 0% below 100%"),
    "the lower bound decides under lower_bound": (
        gate(9, 1, gate_rule="lower_bound"),
        "fail",
        f"95% lower bound {case_rate_interval(9, 10).low:.1%} below 80.0%",
    ),
    "a lower bound rule without interval uses the rate": (
        gate(9, 1, gate_rule="lower_bound", interval=None),
        "pass",
        "",
    ),
    "a hard gate fails on one failing case": (
        gate(99, 1, criticality="hard_gate", threshold=0.5),
        "fail",
        "hard gate: 1 failing case",
    ),
    "a hard gate names its failing cases": (
        gate(8, 2, criticality="hard_gate"),
        "fail",
        "hard gate: 2 failing cases",
    ),
    "a hard gate with a null threshold passes without failures": (
        gate(10, 0, criticality="hard_gate", threshold=None),
        "pass",
        "",
    ),
    "a hard gate with a null threshold fails on a failure": (
        gate(9, 1, criticality="hard_gate", threshold=None),
        "fail",
        "hard gate: 1 failing case",
    ),
    "a null threshold is not scored": (gate(threshold=None), "not scored", "threshold: null"),
    "a partial run decides nothing": (
        gate(collected=20),
        "partial",
        "10 of 20 cases ran: the gate needs all",
    ),
    "a partial run of a hard gate still fails": (
        gate(criticality="hard_gate", collected=20),
        "fail",
        "hard gate: 1 failing case",
    ),
    "every case collected ran": (gate(collected=10), "pass", ""),
    "no verdicts for errors": (gate(0, 0, errors=3, cases=3), "no verdicts", "3 judge errors, no verdict"),
    "one judge error": (gate(0, 0, errors=1, cases=1), "no verdicts", "1 judge error, no verdict"),
    "no case judged": (gate(0, 0, skipped=2, cases=2), "no verdicts", "no case judged"),
    "no cases": (gate(0, 0), "no verdicts", "no cases"),
    "a regression fails whatever the rate": (
        gate(10, 0, regression="regression: p=0.01"),
        "fail",
        "regression: p=0.01",
    ),
    "a regression is not excused by a calibration": (
        gate(10, 0, regression="regression: p=0.01", override="pass", detail="corrected 0.95"),
        "fail",
        "regression: p=0.01",
    ),
    "the calibration decides an override": (
        gate(10, 0, override="untrusted", detail="judge untrusted"),
        "untrusted",
        "judge untrusted",
    ),
}


@pytest.mark.parametrize(("benchmark", "status", "detail"), GATES.values(), ids=GATES.keys())
def test_gate_status_and_why(benchmark: BenchmarkGate, status: str, detail: str) -> None:
    assert (benchmark.status, why(benchmark)) == (status, detail)


def test_a_rate_just_under_the_threshold_passes_within_rounding() -> None:
    assert gate(2, 1, threshold=2 / 3 + 1e-12).status == "pass"
    assert gate(2, 1, threshold=2 / 3 + 1e-6).status == "fail"


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("MINIMUM", 0.2),
        ("MAXIMUM", 0.8),
        ("MEAN", (0.2 + 0.8 + 0.5) / 3),
        ("WEIGHTED_AVERAGE", (0.2 * 1 + 0.8 * 3 + 0.5 * 0) / 4),
    ],
)
def test_aggregation_methods(method: str, expected: float) -> None:
    assert aggregate(method, [(0.2, 1.0), (0.8, 3.0), (0.5, 0.0)]) == pytest.approx(expected)


def test_a_weighted_average_of_no_weight_is_the_mean() -> None:
    assert aggregate("WEIGHTED_AVERAGE", [(0.2, 0.0), (0.8, 0.0)]) == pytest.approx(0.5)


MEMBERS = {
    "A": gate(3, 1, code="A", weight=1.0),  # 0.75
    "B": gate(1, 1, code="B", weight=3.0),  # 0.5
    "H": gate(3, 1, code="H", criticality="hard_gate"),  # fails
    "N": gate(0, 0, code="N", errors=2, cases=2),  # no verdicts
}

RUBRICS = {
    "passes at its threshold": (
        ["A", "B"],
        0.5625,
        RubricGate("R", "Rl", "WEIGHTED_AVERAGE", 0.5625, 0.5625, "pass"),
    ),
    "fails below its threshold": (
        ["A", "B"],
        0.7,
        RubricGate("R", "Rl", "WEIGHTED_AVERAGE", 0.5625, 0.7, "fail", "score 0.562 below 0.7"),
    ),
    "is not scored without threshold": (
        ["A", "B"],
        None,
        RubricGate("R", "Rl", "WEIGHTED_AVERAGE", 0.5625, None, "not scored"),
    ),
    "is incomplete without a member": (
        ["A", "X", "Y"],
        0.5,
        RubricGate("R", "Rl", "WEIGHTED_AVERAGE", None, 0.5, "incomplete", "not in this run: X, Y"),
    ),
    "is incomplete when a member has no verdicts": (
        ["A", "N"],
        0.5,
        RubricGate("R", "Rl", "WEIGHTED_AVERAGE", None, 0.5, "incomplete", "no verdicts for N"),
    ),
    "fails on a failing hard gate whatever the score": (
        ["A", "H"],
        0.5,
        RubricGate("R", "Rl", "WEIGHTED_AVERAGE", 0.75, 0.5, "fail", "hard gate failed: H"),
    ),
    "fails on a failing hard gate also without verdicts elsewhere": (
        ["H", "N"],
        0.5,
        RubricGate("R", "Rl", "WEIGHTED_AVERAGE", None, 0.5, "fail", "hard gate failed: H"),
    ),
}


@pytest.mark.parametrize(("members", "threshold", "expected"), RUBRICS.values(), ids=RUBRICS.keys())
def test_rubric_gate(members: list[str], threshold: float | None, expected: RubricGate) -> None:
    assert rubric_gate("R", "Rl", "WEIGHTED_AVERAGE", threshold, members, MEMBERS) == expected


def test_a_rubric_score_just_under_its_threshold_passes_within_rounding() -> None:
    assert rubric_gate("R", "", "MEAN", 0.75 + 1e-12, ["A"], MEMBERS).status == "pass"


def spec(code: str, members: list[str], **fields: object) -> RubricSpec:
    return RubricSpec(code=code, benchmarks=members, **fields)  # type: ignore[arg-type]


def test_rubric_gates_of_the_rubrics_this_run_reached() -> None:
    rubrics = [
        spec("R-ONE", ["A", "B"], label="One", aggregation_method="MINIMUM", passing_threshold=0.5),
        spec("R-NONE", ["X"]),
        spec("R-PART", ["B", "X"]),
    ]
    one, part = rubric_gates(rubrics, list(MEMBERS.values()))
    assert one == RubricGate("R-ONE", "One", "MINIMUM", 0.5, 0.5, "pass")
    assert (part.code, part.label, part.status, part.detail) == (
        "R-PART",
        "",
        "incomplete",
        "not in this run: X",
    )


def rubric(code: str, members: list[str], lines: int = 0) -> Rubric:
    where = Location(f"rubrics/{code}.yaml", 1, 1)
    located = tuple(Location(where.path, 5 + i, 5) for i in range(lines))
    return Rubric(spec(code, members), where, located)


def test_reference_errors_point_at_the_line() -> None:
    rubrics = [rubric("R-ONE", ["BEN-1", "BEN-2X", "ZZZ"], lines=2), rubric("R-TWO", ["BEN-2"])]
    parents = {
        "BEN-1": ("R-ONE", Location("b/BEN-1.yaml", 4, 16)),
        "BEN-2": ("R-ONE", Location("b/BEN-2.yaml", 4, 16)),
        "BEN-3": ("R-ONF", Location("b/BEN-3.yaml", 4, 16)),
        "BEN-4": ("QQQQ", Location("b/BEN-4.yaml", 3, 16)),
    }
    rendered = [e.render() for e in reference_errors(rubrics, ["BEN-1", "BEN-2", "BEN-3", "BEN-4"], parents)]
    assert rendered == [
        "rubrics/R-ONE.yaml:6:5: benchmarks[1]: no benchmark 'BEN-2X' in the suite\n"
        "  hint: did you mean 'BEN-2'?",
        "rubrics/R-ONE.yaml:1:1: benchmarks[2]: no benchmark 'ZZZ' in the suite\n"
        "  hint: list the code of an existing benchmark",
        "b/BEN-2.yaml:4:16: parent_rubric: rubric 'R-ONE' does not list BEN-2 in its benchmarks\n"
        "  hint: add BEN-2 to the benchmarks of R-ONE (rubrics/R-ONE.yaml:1:1)",
        "b/BEN-3.yaml:4:16: parent_rubric: no rubric 'R-ONF'\n  hint: did you mean 'R-ONE'?",
        "b/BEN-4.yaml:3:16: parent_rubric: no rubric 'QQQQ'\n"
        "  hint: name a rubric of the rubrics folder, or null",
    ]


def test_no_reference_errors_in_a_consistent_suite() -> None:
    parents = {"BEN-1": ("R-ONE", Location("b/BEN-1.yaml", 4, 16))}
    assert reference_errors([rubric("R-ONE", ["BEN-1"])], ["BEN-1"], parents) == []


def test_weights_under_one_still_weigh() -> None:
    assert aggregate("WEIGHTED_AVERAGE", [(0.2, 0.25), (0.8, 0.5)]) == pytest.approx((0.05 + 0.4) / 0.75)


def test_a_rubric_names_every_member_at_fault() -> None:
    members = {**MEMBERS, "H2": replace(MEMBERS["H"], code="H2"), "N2": replace(MEMBERS["N"], code="N2")}
    assert rubric_gate("R", "", "MEAN", 0.5, ["H", "H2"], members).detail == "hard gate failed: H, H2"
    assert rubric_gate("R", "", "MEAN", 0.5, ["H", "H2", "N"], members).detail == "hard gate failed: H, H2"
    assert rubric_gate("R", "", "MEAN", 0.5, ["A", "N", "N2"], members).detail == "no verdicts for N, N2"
