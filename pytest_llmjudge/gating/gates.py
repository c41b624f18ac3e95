"""Pass rates, thresholds and rubric aggregation from per-case records. No pytest here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .records import CaseRecord
from .statistics import RateInterval, case_rate_interval

if TYPE_CHECKING:
    from ..suite.errors import Location, SpecError
    from ..suite.files import Rubric, RubricSpec

EPSILON = 1e-9
CORRECTED_RULES = frozenset({"corrected", "corrected_lower_bound"})  # the calibration decides


def applied_rule(rule: str, judged: bool) -> str:
    """The gate rule a benchmark is gated by: a corrected rule corrects for a judge's errors, so a
    benchmark decided by code checks alone keeps the rule's uncorrected form."""
    if judged or rule not in CORRECTED_RULES:
        return rule
    return "lower_bound" if rule == "corrected_lower_bound" else "point"


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
    flaky: int = 0  # cases whose repeated samples disagree
    gate_rule: str = "point"  # point | lower_bound | corrected | corrected_lower_bound
    interval: RateInterval | None = None  # of the pass rate, over the same case verdicts
    regression: str = ""  # a significant regression against the baseline that fails this gate
    override: str | None = None  # a status the calibration decides (``untrusted``, a corrected rate)
    detail: str = ""
    collected: int | None = None  # the benchmark's case count at collection (None: not known)
    unjudged: int = 0  # cases the run's budget stopped before their call (ERRORs)
    task_errors: int = 0  # of ``errors``, the cases whose task gave no output to judge

    @property
    def partial(self) -> bool:
        """Not every case of the benchmark ran (a node id, ``-k``, ``--lf``), or the run's budget
        stopped some before they were judged."""
        return bool(self.unjudged) or (self.collected is not None and self.cases < self.collected)

    @property
    def verdicts(self) -> int:
        return self.passed + self.failed

    @property
    def ci_low(self) -> float | None:
        return None if self.interval is None else self.interval.low

    @property
    def ci_high(self) -> float | None:
        return None if self.interval is None else self.interval.high

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.verdicts if self.verdicts else None

    @property
    def status(self) -> str:
        """``pass``, ``fail``, ``partial`` (not every case ran), ``not scored`` (null threshold)
        or ``no verdicts``. A hard gate fails on any failing case, also in a partial run."""
        if self.regression:  # also under a calibration-corrected rule: a regression is never excused
            return "fail"
        if self.override is not None:
            return self.override
        if self.criticality == "hard_gate" and self.failed:
            return "fail"
        if self.partial:
            return "partial"  # the rate of some cases decides nothing
        rate = self.pass_rate
        if rate is None:
            return "no verdicts"
        if self.threshold is None:
            return "pass" if self.criticality == "hard_gate" else "not scored"
        if self.gate_rule == "lower_bound" and self.ci_low is not None:
            rate = self.ci_low
        return "pass" if rate + EPSILON >= self.threshold else "fail"


def _pct(value: float) -> str:
    return f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def why(gate: BenchmarkGate) -> str:
    """Why a benchmark's gate has its status, in a few words (the summary's ``detail``)."""
    status = gate.status
    if gate.regression:
        return gate.regression
    if gate.detail:
        return gate.detail
    if status == "fail":
        if gate.criticality == "hard_gate" and gate.failed:
            return f"hard gate: {gate.failed} failing case{'s' if gate.failed != 1 else ''}"
        bound = gate.gate_rule == "lower_bound" and gate.ci_low is not None
        rate = gate.ci_low if bound else gate.pass_rate
        measured = "95% lower bound" if bound else "pass rate"
        if rate is not None and gate.threshold is not None:
            return f"{measured} {_pct(rate)} below {_pct(gate.threshold)}"
    if status == "partial" and gate.unjudged:
        return f"budget reached before {gate.unjudged} of {gate.cases} cases were judged: the gate needs all"
    if status == "partial":
        return f"{gate.cases} of {gate.collected} cases ran: the gate needs all"
    if status == "no verdicts":
        if gate.errors:
            return f"{error_counts(gate.task_errors, gate.errors - gate.task_errors)}, no verdict"
        return "no cases" if not gate.cases else "no case judged"
    if status == "not scored":
        return "threshold: null"
    return ""


def error_counts(task: int, judge: int) -> str:
    """``2 task errors, 1 judge error``: the errors of each step of a case, those that occurred."""
    parts = [(task, "task error"), (judge, "judge error")]
    return ", ".join(f"{n} {word}{'s' if n != 1 else ''}" for n, word in parts if n)


def task_errored(record: CaseRecord) -> bool:
    """An ERROR of the case's task step (no output to judge), not of its judge: the reason of an
    ERROR starts with its failure kind, ``task-…`` for the task step."""
    return record.result == "error" and record.reason.startswith("task-")


@dataclass(frozen=True)
class RubricGate:
    code: str
    label: str
    method: str
    score: float | None
    threshold: float | None
    status: str  # pass | fail | incomplete | not scored
    detail: str = ""


def benchmark_gates(
    records: Iterable[CaseRecord], collected: Mapping[str, int] | None = None
) -> list[BenchmarkGate]:
    """One gate per benchmark, in first-seen order, from the cases that ran. ``collected`` maps a
    benchmark code to its case count at collection: fewer cases in ``records`` make it partial.
    A benchmark without cases has one record with an empty case id (so it is listed): 0 cases."""
    grouped: dict[str, list[CaseRecord]] = {}
    for record in records:
        grouped.setdefault(record.benchmark, []).append(record)
    gates = []
    for code, items in grouped.items():
        first = items[0]
        cases = [i for i in items if i.case]
        count = {r: sum(1 for i in cases if i.result == r) for r in ("pass", "fail", "error", "skip")}
        verdicts = count["pass"] + count["fail"]
        # repeats: each case's samples were reduced to its verdict, which the rate counts
        samples = sum(len(i.samples) or 1 for i in cases if i.result in ("pass", "fail"))
        gates.append(
            BenchmarkGate(
                code=code,
                label=first.label,
                cases=len(cases),
                passed=count["pass"],
                failed=count["fail"],
                errors=count["error"],
                skipped=count["skip"],
                review=sum(1 for i in items if i.needs_review),  # as the review file: a panel's splits too
                flaky=sum(1 for i in items if i.flaky),
                threshold=first.threshold,
                criticality=first.criticality,
                weight=first.weight,
                parent_rubric=first.parent_rubric,
                collected=None if collected is None else collected.get(code),
                unjudged=sum(1 for i in cases if i.budget_stopped),
                task_errors=sum(1 for i in cases if task_errored(i)),
                interval=case_rate_interval(count["pass"], verdicts, samples) if verdicts else None,
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
    # a benchmark judged pairwise has no absolute pass rate: its items pass unless they lost
    scored = [
        (None if gates[m].gate_rule == "pairwise" else gates[m].pass_rate, gates[m].weight) for m in members
    ]
    unscored = [
        f"{m} (judged pairwise)" if gates[m].gate_rule == "pairwise" else m
        for m, (rate, _) in zip(members, scored, strict=True)
        if rate is None
    ]
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


def reference_errors(
    rubrics: Iterable[Rubric], codes: Iterable[str], parents: Mapping[str, tuple[str, Location]]
) -> list[SpecError]:
    """Rubrics listing a benchmark that does not exist, and ``parent_rubric`` values naming a
    rubric that does not exist or does not list the benchmark, each at its own line.

    ``codes``: every benchmark of the suite; ``parents``: benchmark code -> (parent rubric, where).
    """
    from ..suite.errors import SpecError, nearest

    known = set(codes)
    by_code = {r.spec.code: r for r in rubrics}
    errors = []
    for rubric in by_code.values():
        for i, member in enumerate(rubric.spec.benchmarks):
            if member in known:
                continue
            where = rubric.benchmark_locations[i] if i < len(rubric.benchmark_locations) else rubric.location
            guess = nearest(member, known)
            errors.append(
                SpecError(
                    where,
                    f"benchmarks[{i}]",
                    f"no benchmark '{member}' in the suite",
                    f"did you mean '{guess}'?" if guess else "list the code of an existing benchmark",
                )
            )
    for code, (parent, where) in parents.items():
        if parent not in by_code:
            guess = nearest(parent, by_code)
            hint = f"did you mean '{guess}'?" if guess else "name a rubric of the rubrics folder, or null"
            errors.append(SpecError(where, "parent_rubric", f"no rubric '{parent}'", hint))
        elif code not in by_code[parent].spec.benchmarks:
            errors.append(
                SpecError(
                    where,
                    "parent_rubric",
                    f"rubric '{parent}' does not list {code} in its benchmarks",
                    f"add {code} to the benchmarks of {parent} ({by_code[parent].location})",
                )
            )
    return errors
