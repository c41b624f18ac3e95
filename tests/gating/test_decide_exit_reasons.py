"""The exit reasons word for word, where test_decide_exit.py checks a part of each: what the
terminal, the results file and the report say, in the order they say it."""

from __future__ import annotations

import pytest

from pytest_llmjudge.gating.exit_status import decide_exit
from pytest_llmjudge.gating.gates import BenchmarkGate
from pytest_llmjudge.gating.records import CaseRecord
from tests.gating.test_decide_exit import gate

SNAPSHOT = "compiled judge requests differ from their snapshots (see snapshot report)"
BROKEN = "a benchmark or rubric file did not load (errors above)"


def ran(code: str, passed: int = 9, failed: int = 1, errors: int = 0) -> list[CaseRecord]:
    """Every case record of a benchmark, the passing ones too."""
    made = [CaseRecord(code, f"p{i}", "pass", nodeid=f"{code}::p{i}") for i in range(passed)]
    made += [CaseRecord(code, f"f{i}", "fail", nodeid=f"{code}::f{i}") for i in range(failed)]
    return made + [CaseRecord(code, f"e{i}", "error", nodeid=f"{code}::e{i}") for i in range(errors)]


def decide(
    status: int,
    benchmarks: list[BenchmarkGate],
    records: list[CaseRecord],
    *,
    broken: bool = False,
    snapshot_failed: bool = False,
) -> tuple[int, tuple[str, ...]]:
    failing = {r.nodeid for r in records if r.result in {"fail", "error"}}
    decision = decide_exit(
        status,
        benchmarks=benchmarks,
        rubrics=[],
        broken=broken,
        snapshot_failed=snapshot_failed,
        failed_nodeids=failing,
        records=records,
    )
    return decision.status, decision.reasons


CASES = {
    "a passing run": (
        0,
        [gate(failed=0)],
        ran("B1", 10, 0),
        {},
        0,
        ["no gate failed, no item failed or errored"],
    ),
    "a broken file": (1, [gate(failed=0)], ran("B1", 10, 0), {"broken": True}, 1, [BROKEN]),
    "a snapshot failure": (1, [gate(failed=0)], ran("B1", 10, 0), {"snapshot_failed": True}, 1, [SNAPSHOT]),
    "a failing gate with an erroring case decides something": (
        1,
        [gate(passed=5, failed=4, errors=1)],
        ran("B1", 5, 4, 1),
        {},
        1,
        ["gate B1 failed: pass rate 55.6% below 80.0%"],
    ),
    "only the failing cases are counted": (
        1,
        [gate(), gate("B2", passed=10, failed=0)],
        ran("B1") + ran("B2", 10, 0),
        {},
        0,
        ["1 failing case(s) of B1 are within its gate (pass rate 90.0%, needs 80%)"],
    ),
    "a not-scored benchmark tolerates its failures": (
        1,
        [gate(threshold=None)],
        ran("B1"),
        {},
        0,
        ["1 failing case(s) of B1 decide nothing: it is not scored (threshold: null)"],
    ),
    "only partial benchmarks with failures are named": (
        1,
        [gate(collected=20), gate("B2", failed=0, collected=20), gate("B3", collected=20)],
        ran("B1") + ran("B2", 10, 0) + ran("B3"),
        {},
        1,
        ["2 failing or erroring item(s) (not every case of B1, B3 ran, so no gate can tolerate them)"],
    ),
}


@pytest.mark.parametrize(
    ("status", "benchmarks", "records", "flags", "expected", "reasons"), CASES.values(), ids=CASES.keys()
)
def test_exit_reasons_word_for_word(
    status: int,
    benchmarks: list[BenchmarkGate],
    records: list[CaseRecord],
    flags: dict[str, bool],
    expected: int,
    reasons: list[str],
) -> None:
    assert decide(status, benchmarks, records, **flags) == (expected, tuple(reasons))


def test_a_snapshot_failure_is_never_called_a_clean_run() -> None:
    """Whatever status pytest had when the gates were decided (syrupy may set its own later)."""
    _, reasons = decide(0, [gate(failed=0)], ran("B1", 10, 0), snapshot_failed=True)
    assert reasons == (SNAPSHOT,)


def test_losses_to_the_baseline_within_a_pairwise_gate() -> None:
    within = gate(gate_rule="pairwise", override="pass")
    assert decide(1, [within], ran("B1")) == (
        0,
        ("1 case(s) of B1 lost to the baseline: are within its pairwise gate",),
    )
    unscored = gate(gate_rule="pairwise", override="not scored", detail="no pairwise gate")
    assert decide(1, [unscored], ran("B1")) == (
        0,
        ("1 case(s) of B1 lost to the baseline: no pairwise gate",),
    )


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("budget error: budget reached: spent $1.00 of $1.00", "budget reached: spent $1.00 of $1.00"),
        ("stopped before its call", "stopped before its call"),
    ],
)
def test_the_budget_says_how_many_cases_it_stopped(reason: str, said: str) -> None:
    stopped = [
        CaseRecord("B1", f"s{i}", "error", nodeid=f"B1::s{i}", budget_stopped=True, reason=reason)
        for i in range(2)
    ]
    status, reasons = decide(1, [gate(failed=0, errors=2)], ran("B1", 10, 0) + stopped)
    assert status == 1
    assert f"the budget stopped the run: 2 case(s) not judged ({said})" in reasons
