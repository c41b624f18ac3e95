"""One verdict for the run, decided here once from its records: the benchmark gates (rule,
interval, calibration, baseline comparison), the rubric gates, the flipped cases, the exit status
and its reasons, and the detail text of each gate. The terminal, JUnit, the results file and the
HTML report only render it. Pure: the glue gathers the inputs.

It is decided in two steps because pytest asks for it at two moments: ``gate_run`` when the cases
have run (before ``--junitxml`` writes its file), ``decide_run`` once every plugin has finished
the session (the exit status follows snapshot checks too).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..suite.vocabulary import JUDGED_TYPES
from .drift import JUDGE_CHANGED, WAY_OUT, judged_alike, mark_mixed
from .exit_status import TESTS_FAILED, decide_exit
from .gates import BenchmarkGate, RubricGate, applied_rule, why

if TYPE_CHECKING:
    from .calibration_run import BenchmarkCalibration
    from .judge_drift import JudgeDrift
    from .pairwise_stats import PairwiseFigures
    from .records import CaseRecord, JudgeFacts
    from .statistics import Comparison


NOTHING_FAILED = "no gate failed, no item failed or errored"  # ``decide_exit``'s reason for a pass


@dataclass(frozen=True)
class Flip:
    """A release case whose verdict differs from the baseline's."""

    benchmark: str
    case: str
    baseline: str  # pass | fail
    candidate: str

    def to_dict(self) -> dict[str, str]:
        return {
            "benchmark": self.benchmark,
            "case": self.case,
            "baseline": self.baseline,
            "candidate": self.candidate,
        }


@dataclass(frozen=True)
class GateSettings:
    """The run's settings the gates follow."""

    gate: str = "point"
    margin: float = 0.05
    alpha: float = 0.05
    fail_on: str | None = None
    baseline: bool = False  # a baseline was asked for (``baseline`` None then: it could not be read)


@dataclass(frozen=True)
class RunGates:
    """Every gate of the run, decided once."""

    benchmarks: tuple[BenchmarkGate, ...]
    rubrics: tuple[RubricGate, ...] = ()
    calibrations: tuple[BenchmarkCalibration, ...] = ()
    comparisons: tuple[Comparison, ...] | None = None
    flips: tuple[Flip, ...] | None = None
    notes: tuple[str, ...] = ()  # what the run must say about its gates (an unread baseline)
    pairwise: tuple[PairwiseFigures, ...] | None = None  # the pairwise benchmarks' figures
    drift: tuple[JudgeDrift, ...] | None = None  # --llmjudge-rejudge-baseline: the judge's flips

    def detail(self, code: str) -> str:
        """The one detail text of a benchmark's gate, as every output shows it."""
        return next((why(g) for g in self.benchmarks if g.code == code), "")


@dataclass(frozen=True)
class RunVerdict:
    gates: RunGates
    status: int
    reasons: tuple[str, ...]
    tolerated: frozenset[str] = frozenset()  # failing case items whose benchmark gate passed

    @property
    def failures_tolerated(self) -> bool:
        """The run exits 0 though case items failed (each within its benchmark's gate)."""
        return bool(self.tolerated) and self.status == 0


def gate_run(
    records: Sequence[CaseRecord],
    settings: GateSettings,
    *,
    baseline: Mapping[str, Any] | None = None,
    baseline_error: str | None = None,
    calibrations: Sequence[BenchmarkCalibration] = (),
    rubrics: Sequence[Any] = (),
) -> RunGates:
    """The run's gates: each benchmark's gate rule, its calibration, its comparison with the
    baseline (a significant regression failing it under ``fail_on: regression``), the rubrics."""
    from .calibration_run import apply_calibration, gated_records
    from .gates import benchmark_gates, rubric_gates
    from .pairwise_gates import pairwise_gates

    # each record carries its benchmark's case count: an xdist controller collects nothing
    counts = {r.benchmark: r.benchmark_cases for r in records}
    ruled = _with_rules(records, benchmark_gates(gated_records(records), counts), settings.gate)
    compared = _against_baseline(ruled, records, settings, baseline, baseline_error)
    ruled, said = mark_mixed(compared.gates, records, settings.fail_on)
    final = apply_calibration(ruled, list(calibrations))
    final, figures = pairwise_gates(
        records, final, fail_on=settings.fail_on, margin=settings.margin, alpha=settings.alpha
    )
    return RunGates(
        tuple(final),
        tuple(rubric_gates(list(rubrics), final)),
        tuple(calibrations),
        compared.comparisons,
        compared.flips,
        compared.notes + said,
        figures,
    )


@dataclass(frozen=True)
class _Compared:
    """The benchmark gates after the baseline comparison, and what it found."""

    gates: list[BenchmarkGate]
    comparisons: tuple[Comparison, ...] | None = None
    flips: tuple[Flip, ...] | None = None
    notes: tuple[str, ...] = ()


def _against_baseline(
    ruled: list[BenchmarkGate],
    records: Sequence[CaseRecord],
    settings: GateSettings,
    baseline: Mapping[str, Any] | None,
    baseline_error: str | None,
) -> _Compared:
    """``ruled`` compared with the baseline run, when there is one: a baseline asked for but not
    read fails every gate under ``--llmjudge-fail-on regression``; a read one is compared per
    benchmark (pairwise ones excepted: their judge compares), its regressions failing their gates
    under ``--llmjudge-fail-on``."""
    if settings.baseline and baseline is None:  # unreadable under --llmjudge-fail-on regression
        unchecked = f"regression not checked: {baseline_error or '--llmjudge-baseline: not read'}"
        notes = (f"{unchecked}: every gate fails under --llmjudge-fail-on regression",)
        return _Compared([replace(g, regression=unchecked) for g in ruled], notes=notes)
    if baseline is None:
        return _Compared(ruled)
    from .statistics import compare_benchmarks

    now = release_verdicts(records)
    before = release_verdicts_of_results(baseline)
    paired = {r.benchmark for r in records if r.pairwise is not None}  # compared by the judge instead
    pairs = {
        g.code: (before[g.code], now.get(g.code, {}))
        for g in ruled
        if g.code in before and g.code not in paired
    }
    comparisons = tuple(compare_benchmarks(pairs, margin=settings.margin, alpha=settings.alpha))
    comparisons, said = judged_alike(comparisons, records, baseline, settings.fail_on)
    if settings.fail_on:
        ruled = _failing_regressions(ruled, comparisons, settings.fail_on)
    return _Compared(ruled, comparisons, flips_between(before, now), said)


def _failing_regressions(
    ruled: list[BenchmarkGate], comparisons: Sequence[Comparison], fail_on: str
) -> list[BenchmarkGate]:
    """``ruled`` with each gate whose comparison fails under ``fail_on`` failed by it: a
    regression under ``regression``, and a comparison across a judge change under either."""
    failing = {"regression", JUDGE_CHANGED} if fail_on == "regression" else {JUDGE_CHANGED}
    regressions = {c.benchmark: c for c in comparisons if c.verdict in failing}
    return [
        replace(g, regression=regression_detail(regressions[g.code])) if g.code in regressions else g
        for g in ruled
    ]


def decide_run(
    gates: RunGates,
    status: int,
    *,
    broken: bool,
    snapshot_failed: bool,
    failed_nodeids: Collection[str],
    records: Sequence[CaseRecord],
    over_budget: str | None = None,
) -> RunVerdict:
    """The exit status of the run and every reason for it. ``over_budget`` says the run's calls
    spent past its budget (calls in flight, usage above its projection): the run fails then."""
    decision = decide_exit(
        status,
        benchmarks=gates.benchmarks,
        rubrics=gates.rubrics,
        broken=broken,
        snapshot_failed=snapshot_failed,
        failed_nodeids=failed_nodeids,
        records=records,
    )
    if not over_budget:
        return RunVerdict(gates, decision.status, decision.reasons, decision.tolerated)
    reasons = (*(r for r in decision.reasons if r != NOTHING_FAILED), over_budget)
    return RunVerdict(gates, max(decision.status, TESTS_FAILED), reasons, decision.tolerated)


def _with_rules(
    records: Sequence[CaseRecord], gates: Sequence[BenchmarkGate], rule: str
) -> list[BenchmarkGate]:
    """Each gate with the rule it applies: its benchmark's own ``judge.gate``, else the run's."""
    judges: dict[str, JudgeFacts] = {}  # each benchmark's judge facts, from its first record
    for record in records:
        if record.judge:
            judges.setdefault(record.benchmark, record.judge)
    ruled = []
    for gate in gates:
        judge = judges.get(gate.code)
        judged = (judge.evaluator_type if judge else "llm_judge") in JUDGED_TYPES
        ruled.append(replace(gate, gate_rule=applied_rule((judge.gate if judge else "") or rule, judged)))
    return ruled


def release_verdicts(records: Sequence[CaseRecord]) -> dict[str, dict[str, bool]]:
    """Each benchmark's release-case verdicts (case id → passed). A calibration case's result is
    agreement with its human label, not a verdict, and its id may be a release case's; a pairwise
    case's is its comparison with a baseline output."""
    grouped: dict[str, dict[str, bool]] = {}
    for r in records:
        if r.result in ("pass", "fail") and not r.calibration and r.pairwise is None:
            grouped.setdefault(r.benchmark, {})[r.case] = r.result == "pass"
    return grouped


def release_verdicts_of_results(results: Mapping[str, Any]) -> dict[str, dict[str, bool]]:
    """``release_verdicts`` of a results file."""
    return {
        b["code"]: {
            c["id"]: c["result"] == "pass"
            for c in b["cases"]
            if c["result"] in ("pass", "fail") and not c["calibration"] and not c.get("pairwise")
        }
        for b in results["benchmarks"]
    }


def flips_between(
    before: Mapping[str, Mapping[str, bool]], now: Mapping[str, Mapping[str, bool]]
) -> tuple[Flip, ...]:
    """The release cases whose verdict changed, in the order of ``now``."""
    return tuple(
        Flip(code, case, _word(before[code][case]), _word(passed))
        for code, verdicts in now.items()
        for case, passed in verdicts.items()
        if case in before.get(code, {}) and before[code][case] != passed
    )


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def regression_detail(comparison: Comparison) -> str:
    if comparison.verdict == JUDGE_CHANGED:
        return f"{comparison.judge_change}: the comparison measures the judge too; {WAY_OUT}"
    return (
        f"regression against the baseline: {comparison.b} case(s) pass → fail, {comparison.c} fail → pass "
        f"(McNemar p = {comparison.p_adjusted:.3g} Holm-adjusted)"
    )


def after_other_plugins(verdict: RunVerdict, decided_on: int, status_now: int) -> RunVerdict:
    """``verdict`` once every plugin has finished the session: one that changed pytest's exit
    status after the gates were decided (syrupy fails a run that leaves snapshots unused) is
    obeyed, and said."""
    if status_now == decided_on:
        return verdict
    reason = (
        f"pytest's exit status became {status_now} after the gates were decided: another plugin "
        "failed the session (syrupy does for unused snapshots; see its report)"
    )
    return replace(verdict, status=max(verdict.status, status_now), reasons=(*verdict.reasons, reason))
