"""The exit-status policy, case by case: the status a run ends with and the reasons it gives."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from pytest_llmjudge.gating.exit_status import decide_exit
from pytest_llmjudge.gating.gates import BenchmarkGate, RubricGate
from pytest_llmjudge.gating.records import CaseRecord

INTERRUPTED, INTERNAL_ERROR, USAGE_ERROR = 2, 3, 4


def gate(
    code: str = "B1", passed: int = 9, failed: int = 1, errors: int = 0, **kwargs: object
) -> BenchmarkGate:
    fields: dict[str, object] = {
        "code": code,
        "label": "",
        "cases": passed + failed + errors,
        "passed": passed,
        "failed": failed,
        "errors": errors,
        "skipped": 0,
        "review": 0,
        "threshold": 0.8,
        "criticality": "threshold_gate",
        "weight": 1.0,
        "parent_rubric": None,
    }
    fields.update(kwargs)
    return BenchmarkGate(**fields)  # type: ignore[arg-type]


def records(code: str = "B1", failed: int = 1, errors: int = 0) -> list[CaseRecord]:
    made = [CaseRecord(code, f"f{i}", "fail", nodeid=f"{code}::f{i}") for i in range(failed)]
    made += [CaseRecord(code, f"e{i}", "error", nodeid=f"{code}::e{i}") for i in range(errors)]
    return made


@dataclass(frozen=True)
class Case:
    status: int  # pytest's own
    benchmarks: list[BenchmarkGate]
    expected: int
    reasons: list[str]  # each must be one of the decided reasons (``in``, in this order)
    rubrics: list[RubricGate] = field(default_factory=list)
    broken: bool = False
    snapshot_failed: bool = False
    records: list[CaseRecord] = field(default_factory=list)
    tolerated: frozenset[str] = frozenset()

    @property
    def failed_nodeids(self) -> set[str]:
        return {r.nodeid for r in self.records}


UNTRUSTED = gate(override="untrusted", detail="judge untrusted: TPR 0.90 < 0.95 (45/50), 100 labels")

CASES = {
    "every gate passes": Case(0, [gate(failed=0)], 0, ["no gate failed, no item failed or errored"]),
    "a failing case within its gate is tolerated": Case(
        1,
        [gate()],
        0,
        ["1 failing case(s) of B1 are within its gate (pass rate 90.0%, needs 80%)"],
        records=records(),
        tolerated=frozenset({"B1::f0"}),
    ),
    "a failing gate fails the run": Case(
        1,
        [gate(passed=7, failed=3)],
        1,
        ["gate B1 failed: pass rate 70.0% below 80.0%"],
        records=records(failed=3),
    ),
    # a pass rate of 100% decides nothing when the calibration does not trust the judge
    "an untrusted judge fails the run": Case(
        0,
        [gate(passed=10, failed=0, override="untrusted", detail=UNTRUSTED.detail)],
        1,
        ["gate B1 failed: judge untrusted: TPR 0.90 < 0.95 (45/50), 100 labels"],
    ),
    "an untrusted judge is not excused by a tolerable failure": Case(
        1, [UNTRUSTED], 1, ["gate B1 failed: judge untrusted"], records=records()
    ),
    "a snapshot failure is not excused by a tolerated case": Case(
        1,
        [gate()],
        1,
        ["compiled judge requests differ from their snapshots"],
        snapshot_failed=True,
        records=records(),
    ),
    "a snapshot failure alone fails the run": Case(
        1, [gate(failed=0)], 1, ["compiled judge requests differ from their snapshots"], snapshot_failed=True
    ),
    "an interrupted run keeps its status": Case(
        INTERRUPTED, [gate(failed=0)], INTERRUPTED, ["pytest stopped with exit status 2"]
    ),
    "an interrupted run with a failing gate is not lowered to 1": Case(
        INTERRUPTED,
        [gate(passed=1, failed=9)],
        INTERRUPTED,
        ["gate B1 failed", "pytest stopped with exit status 2"],
        records=records(failed=9),
    ),
    "an internal error with an untrusted judge keeps its status": Case(
        INTERNAL_ERROR, [UNTRUSTED], INTERNAL_ERROR, ["gate B1 failed", "pytest stopped with exit status 3"]
    ),
    "a usage error keeps its status": Case(
        USAGE_ERROR, [], USAGE_ERROR, ["pytest stopped with exit status 4"]
    ),
    "a broken file fails a run whose gates pass": Case(
        0, [gate(failed=0)], 1, ["a benchmark or rubric file did not load"], broken=True
    ),
    "a broken file is not excused by a tolerated case": Case(
        1, [gate()], 1, ["a benchmark or rubric file did not load"], broken=True, records=records()
    ),
    "a run whose every case errors fails with its reasons": Case(
        1,
        [gate(passed=0, failed=0, errors=3)],
        1,
        ["gate B1 decided nothing: 3 judge errors, no verdict", "3 failing or erroring item(s)"],
        records=records(failed=0, errors=3),
    ),
    "an erroring case is never tolerated": Case(
        1, [gate(errors=1)], 1, ["1 failing or erroring item(s)"], records=records(errors=1)
    ),
    "a failing rubric fails the run": Case(
        0,
        [gate(failed=0)],
        1,
        ["rubric R1 failed: score 0.500 below 0.8"],
        rubrics=[RubricGate("R1", "", "MEAN", 0.5, 0.8, "fail", "score 0.500 below 0.8")],
    ),
    "a failing case of a partial run is not tolerated": Case(
        1,
        [gate(collected=20)],
        1,
        ["1 failing or erroring item(s) (not every case of B1 ran, so no gate can tolerate them)"],
        records=records(),
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide_exit(case: Case) -> None:
    decision = decide_exit(
        case.status,
        benchmarks=case.benchmarks,
        rubrics=case.rubrics,
        broken=case.broken,
        snapshot_failed=case.snapshot_failed,
        failed_nodeids=case.failed_nodeids,
        records=case.records,
    )
    assert decision.status == case.expected
    assert decision.tolerated == case.tolerated
    assert decision.reasons, "every exit status has its reasons"
    found = iter(decision.reasons)
    for wanted in case.reasons:  # in order, each within one reason
        assert any(wanted in reason for reason in found), (wanted, decision.reasons)


def test_a_regression_fails_a_gate_that_a_corrected_rate_passes() -> None:
    from pytest_llmjudge.gating.gates import why

    regressed = gate(override="pass", detail="corrected pass rate 0.950", regression="regression: p=0.01")
    assert regressed.status == "fail" and why(regressed) == "regression: p=0.01"
    decision = decide_exit(
        0,
        benchmarks=[regressed],
        rubrics=[],
        broken=False,
        snapshot_failed=False,
        failed_nodeids=set(),
        records=[],
    )
    assert decision.status == 1
