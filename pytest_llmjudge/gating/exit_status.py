"""The exit-status policy of a run, as a function of what it found. No pytest here."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .gates import BenchmarkGate, RubricGate
from .records import CaseRecord

OK, TESTS_FAILED = 0, 1


@dataclass(frozen=True)
class ExitDecision:
    status: int
    tolerated: frozenset[str] = frozenset()  # failing case items whose benchmark gate passed


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
    failed_gates = {g.code for g in benchmarks if g.status == "fail"}
    if failed_gates or any(g.status == "fail" for g in rubrics) or broken:
        return ExitDecision(max(status, TESTS_FAILED))
    if status != TESTS_FAILED or snapshot_failed:
        return ExitDecision(status)
    tolerated = {r.nodeid for r in records if r.result == "fail" and r.benchmark not in failed_gates}
    if failed_nodeids and set(failed_nodeids) <= tolerated:
        return ExitDecision(OK, frozenset(tolerated))
    return ExitDecision(status)
