"""Pass rates, thresholds and rubric aggregation from per-case records. No pytest here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .records import CaseRecord

if TYPE_CHECKING:
    from ..suite.files import RubricSpec

EPSILON = 1e-9


@dataclass(frozen=True)
class BenchmarkGate:
    code: str
    label: str
    cases: int
    passed: int
    failed: int
    errors: int
    skipped: int
    review: int
    threshold: float | None
    criticality: str
    weight: float
    parent_rubric: str | None

    @property
    def verdicts(self) -> int:
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.verdicts if self.verdicts else None

    @property
    def status(self) -> str:
        """``pass``, ``fail``, ``not scored`` (null threshold) or ``no verdicts``."""
        if self.criticality == "hard_gate" and self.failed:
            return "fail"
        rate = self.pass_rate
        if rate is None:
            return "no verdicts"
        if self.threshold is None:
            return "pass" if self.criticality == "hard_gate" else "not scored"
        return "pass" if rate + EPSILON >= self.threshold else "fail"


@dataclass(frozen=True)
class RubricGate:
    code: str
    label: str
    method: str
    score: float | None
    threshold: float | None
    status: str  # pass | fail | incomplete | not scored
    detail: str = ""


def benchmark_gates(records: Iterable[CaseRecord]) -> list[BenchmarkGate]:
    """One gate per benchmark, in first-seen order."""
    grouped: dict[str, list[CaseRecord]] = {}
    for record in records:
        grouped.setdefault(record.benchmark, []).append(record)
    gates = []
    for code, items in grouped.items():
        first = items[0]
        count = {r: sum(1 for i in items if i.result == r) for r in ("pass", "fail", "error", "skip")}
        gates.append(
            BenchmarkGate(
                code=code,
                label=first.label,
                cases=len(items),
                passed=count["pass"],
                failed=count["fail"],
                errors=count["error"],
                skipped=count["skip"],
                review=sum(1 for i in items if i.uncertain),
                threshold=first.threshold,
                criticality=first.criticality,
                weight=first.weight,
                parent_rubric=first.parent_rubric,
            )
        )
    return gates


def aggregate(method: str, scores: list[tuple[float, float]]) -> float:
    """Combine ``(score, weight)`` pairs by a rubric's ``aggregation_method``."""
    values = [s for s, _ in scores]
    if method == "MINIMUM":
        return min(values)
    if method == "MAXIMUM":
        return max(values)
    total = sum(w for _, w in scores)
    if method == "WEIGHTED_AVERAGE" and total > 0:
        return sum(s * w for s, w in scores) / total
    return sum(values) / len(values)


def rubric_gate(
    code: str,
    label: str,
    method: str,
    threshold: float | None,
    members: list[str],
    gates: dict[str, BenchmarkGate],
) -> RubricGate:
    """Aggregate a rubric's benchmarks; a missing benchmark makes it incomplete, not failed."""
    missing = [m for m in members if m not in gates]
    if missing:
        return RubricGate(
            code, label, method, None, threshold, "incomplete", f"not in this run: {', '.join(missing)}"
        )
    hard_failures = [m for m in members if gates[m].criticality == "hard_gate" and gates[m].status == "fail"]
    scored = [(gates[m].pass_rate, gates[m].weight) for m in members]
    unscored = [m for m, (rate, _) in zip(members, scored, strict=True) if rate is None]
    if unscored:
        if hard_failures:
            return RubricGate(
                code, label, method, None, threshold, "fail", f"hard gate failed: {', '.join(hard_failures)}"
            )
        return RubricGate(
            code, label, method, None, threshold, "incomplete", f"no verdicts for {', '.join(unscored)}"
        )
    score = aggregate(method, [(rate, weight) for rate, weight in scored if rate is not None])
    if hard_failures:
        return RubricGate(
            code, label, method, score, threshold, "fail", f"hard gate failed: {', '.join(hard_failures)}"
        )
    if threshold is None:
        return RubricGate(code, label, method, score, threshold, "not scored")
    status = "pass" if score + EPSILON >= threshold else "fail"
    detail = "" if status == "pass" else f"score {score:.3f} below {threshold:g}"
    return RubricGate(code, label, method, score, threshold, status, detail)


def rubric_gates(rubrics: Iterable[RubricSpec], benchmarks: list[BenchmarkGate]) -> list[RubricGate]:
    """Gates of the (already loaded) rubrics of which at least one benchmark ran."""
    by_code = {g.code: g for g in benchmarks}
    return [
        rubric_gate(r.code, r.label or "", r.aggregation_method, r.passing_threshold, r.benchmarks, by_code)
        for r in rubrics
        if any(m in by_code for m in r.benchmarks)  # else none of its benchmarks ran: not this run's
    ]
