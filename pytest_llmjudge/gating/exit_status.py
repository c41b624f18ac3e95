"""The exit-status policy of a run, as a function of what it found. No pytest here."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..cost.budget import REACHED
from .gates import BenchmarkGate, RubricGate, error_counts, task_errored, why
from .records import CaseRecord

OK, TESTS_FAILED = 0, 1


@dataclass(frozen=True)
class ExitDecision:
    status: int
    tolerated: frozenset[str] = frozenset()  # failing case items whose benchmark gate passed
    reasons: tuple[str, ...] = ()  # why the status is what it is, one line each


def decide_exit(
    status: int,
    *,
    benchmarks: Sequence[BenchmarkGate],
    rubrics: Sequence[RubricGate],
    broken: bool,
    snapshot_failed: bool,
    failed_nodeids: Collection[str],
    records: Sequence[CaseRecord],
) -> ExitDecision:
    """Non-zero exactly when a gate fails, a file is broken or an item errors (or a non-judge test
    fails). A failing case whose benchmark gate still passes (19 of 20 at threshold 0.9) stays a
    FAILED item in the output and in JUnit, but does not by itself fail the run.

    ``status`` is pytest's own exit status; ``broken`` says a benchmark or rubric file did not load.
    """
    failed_gates = {g.code for g in benchmarks if g.status in {"fail", "untrusted"}}
    reasons = [f"gate {g.code} failed: {why(g) or g.status}" for g in benchmarks if g.code in failed_gates]
    reasons += [f"rubric {g.code} failed: {g.detail}" for g in rubrics if g.status == "fail"]
    # a gate whose every case errored decides nothing: the errors fail the run, and say where
    reasons += [
        f"gate {g.code} decided nothing: {why(g)}"
        for g in benchmarks
        if g.status == "no verdicts" and g.errors
    ]
    if broken:
        reasons.append("a benchmark or rubric file did not load (errors above)")
    if snapshot_failed:
        reasons.append("compiled judge requests differ from their snapshots (see snapshot report)")
    if stopped := [r for r in records if r.budget_stopped]:
        said = stopped[-1].reason
        reached = said[said.find(REACHED) :] if REACHED in said else said
        reasons.append(f"the budget stopped the run: {len(stopped)} case(s) not judged ({reached})")
    if status not in (OK, TESTS_FAILED):
        reasons.append(f"pytest stopped with exit status {status} (see above)")
    if failed_gates or any(g.status == "fail" for g in rubrics) or broken:
        return ExitDecision(max(status, TESTS_FAILED), reasons=tuple(reasons))
    if status != TESTS_FAILED or snapshot_failed:
        if status == OK and not reasons:
            reasons.append("no gate failed, no item failed or errored")
        return ExitDecision(status, reasons=tuple(reasons))
    gate_of = {g.code: g for g in benchmarks}
    tolerated = {
        r.nodeid
        for r in records
        if r.result == "fail"
        and r.benchmark in gate_of
        and gate_of[r.benchmark].status in {"pass", "not scored"}
    }
    if failed_nodeids and set(failed_nodeids) <= tolerated:
        reasons += _tolerated_reasons(gate_of, records, failed_nodeids)
        return ExitDecision(OK, frozenset(tolerated), tuple(reasons))
    reasons.append(_not_tolerated(benchmarks, records, failed_nodeids, tolerated))
    return ExitDecision(status, reasons=tuple(reasons))


def _tolerated_reasons(
    gate_of: dict[str, BenchmarkGate], records: Sequence[CaseRecord], failed_nodeids: Collection[str]
) -> list[str]:
    """Why each benchmark's failing cases leave the run passing: its gate holds them."""
    reasons = []
    for code in sorted({r.benchmark for r in records if r.nodeid in failed_nodeids}):
        gate = gate_of[code]
        n = sum(1 for r in records if r.benchmark == code and r.nodeid in failed_nodeids)
        if gate.gate_rule == "pairwise":  # losses to the baseline, weighed by the pairwise gate
            within = "are within its pairwise gate" if gate.status == "pass" else why(gate)
            reasons.append(f"{n} case(s) of {code} lost to the baseline: {within}")
        elif gate.status == "pass":
            # a tolerated case failed, so the gate has a verdict (a pass rate); a passing gate with
            # a failure has a threshold: a hard gate fails on any failure, and calibration decides
            # only gates with a threshold
            assert gate.pass_rate is not None and gate.threshold is not None
            reasons.append(
                f"{n} failing case(s) of {code} are within its gate "
                f"(pass rate {gate.pass_rate:.1%}, needs {gate.threshold:.0%})"
            )
        else:
            reasons.append(
                f"{n} failing case(s) of {code} decide nothing: it is not scored (threshold: null)"
            )
    return reasons


def _not_tolerated(
    benchmarks: Sequence[BenchmarkGate],
    records: Sequence[CaseRecord],
    failed_nodeids: Collection[str],
    tolerated: set[str],
) -> str:
    """How many failing items no gate tolerates, and why none can."""
    partial = sorted(
        {g.code for g in benchmarks if g.status == "partial"}
        & {r.benchmark for r in records if r.nodeid in failed_nodeids}
    )
    text = f"{len(set(failed_nodeids) - tolerated)} failing or erroring item(s)"
    erroring = [r for r in records if r.result == "error" and r.nodeid in failed_nodeids]
    task_errors = sum(1 for r in erroring if task_errored(r))
    if task_errors:  # the system under test gave no output: not the judge's doing
        text += f": {error_counts(task_errors, len(erroring) - task_errors)}"
    if partial:
        text += f" (not every case of {', '.join(partial)} ran, so no gate can tolerate them)"
    return text
