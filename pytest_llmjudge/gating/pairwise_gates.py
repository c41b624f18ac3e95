"""The gates of pairwise benchmarks: their figures (``pairwise_stats``) from the case records, and
what those decide. Pure.

A pairwise benchmark has no absolute verdicts, so its threshold decides nothing: its gate rule is
``pairwise``. ``--llmjudge-fail-on worse`` fails it when the candidate is significantly worse;
``pairwise_gate: non_inferior`` when the win rate's lower bound is below ½ − margin;
``judge.min_consistency`` makes it ``untrusted`` when the judge's position consistency is lower
(or unmeasured). With none of these it is ``not scored``: its losing cases fail as items, the
figures are reported, and nothing is gated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .gates import BenchmarkGate
from .pairwise_stats import PairwiseFigures, pairwise_figures
from .records import CaseRecord, PairwiseRecord

PAIRWISE_RULE = "pairwise"


@dataclass(frozen=True)
class PairwiseRules:
    """What gates a pairwise benchmark (its own ``pairwise_gate`` and ``judge.min_consistency``)."""

    fail_on_worse: bool = False
    gate: str | None = None
    min_consistency: float | None = None
    margin: float = 0.05

    @property
    def gated(self) -> bool:
        return self.fail_on_worse or self.gate is not None or self.min_consistency is not None


def _pct(value: float) -> str:
    return f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def worse_detail(figures: PairwiseFigures) -> str:
    return (
        f"significantly worse than the baseline: {figures.wins} win(s), {figures.losses} loss(es) "
        f"(sign test p = {figures.p_adjusted:.3g} Holm-adjusted)"
    )


def pairwise_gate(gate: BenchmarkGate, figures: PairwiseFigures, rules: PairwiseRules) -> BenchmarkGate:
    """``gate`` decided by its pairwise figures and ``rules`` (a significantly worse candidate
    under ``fail_on worse`` fails it as a regression does: nothing excuses it)."""
    gate = replace(gate, gate_rule=PAIRWISE_RULE, override=None, detail="")
    if figures.n == 0:
        return gate  # no paired case with an outcome: "no verdicts", "partial" or errors say why
    if rules.fail_on_worse and figures.verdict == "worse":
        gate = replace(gate, regression=worse_detail(figures))
    consistency = figures.position_consistency
    if rules.min_consistency is not None and (consistency is None or consistency < rules.min_consistency):
        measured = (
            "not measured (no pair was judged in both orders)"
            if consistency is None
            else f"{_pct(consistency)} of {figures.judged} pairs"
        )
        minimum = _pct(rules.min_consistency)
        detail = f"judge position consistency {measured}, below judge.min_consistency {minimum}"
        return replace(gate, override="untrusted", detail=detail)
    if rules.gate == "non_inferior" and not figures.non_inferior:
        low, bound = _pct(figures.win_rate_ci[0]), _pct(0.5 - rules.margin)
        detail = f"win rate lower bound {low} below {bound} (pairwise_gate: non_inferior)"
        return replace(gate, override="fail", detail=detail)
    if gate.partial:
        return replace(gate, override="partial")
    if rules.gated:
        return replace(gate, override="pass")
    return replace(
        gate,
        override="not scored",
        detail=f"pairwise: {figures.verdict}; not gated (--llmjudge-fail-on worse or pairwise_gate)",
    )


def pairwise_gates(
    records: Sequence[CaseRecord],
    gates: Sequence[BenchmarkGate],
    *,
    fail_on: str | None,
    margin: float,
    alpha: float,
) -> tuple[list[BenchmarkGate], tuple[PairwiseFigures, ...] | None]:
    """Every gate with the pairwise benchmarks' decided, and their figures (None without any);
    sign tests Holm-adjusted across the pairwise benchmarks."""
    by_benchmark: dict[str, list[PairwiseRecord]] = {}
    for record in records:
        if record.pairwise is not None and not record.calibration:
            by_benchmark.setdefault(record.benchmark, []).append(record.pairwise)
    if not by_benchmark:
        return list(gates), None
    outcomes = {
        code: [p.outcome for p in pairs if p.outcome is not None] for code, pairs in by_benchmark.items()
    }
    unpaired = {
        code: sum(p.unpaired for p in pairs) + len(pairs[0].baseline_only)
        for code, pairs in by_benchmark.items()
    }
    consistent = {
        code: [p.consistent for p in pairs if p.consistent is not None]
        for code, pairs in by_benchmark.items()
    }
    figures = pairwise_figures(outcomes, unpaired, consistent=consistent, margin=margin, alpha=alpha)
    by_code = {f.benchmark: f for f in figures}
    decided = []
    for gate in gates:
        if gate.code in by_code:
            first = by_benchmark[gate.code][0]
            rules = PairwiseRules(fail_on == "worse", first.gate, first.min_consistency, margin)
            gate = pairwise_gate(gate, by_code[gate.code], rules)
        decided.append(gate)
    return decided, tuple(figures)
