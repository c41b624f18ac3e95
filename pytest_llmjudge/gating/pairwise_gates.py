"""The gates of pairwise benchmarks: their figures (``pairwise_stats``) from the case records, and
what those decide. Pure.

A pairwise benchmark has no absolute verdicts, so its threshold decides nothing: its gate rule is
``pairwise``. ``--llmjudge-fail-on worse`` fails it when the candidate is significantly worse;
``pairwise_gate: non_inferior`` when the win rate's lower bound is below ½ − margin;
``judge.min_consistency`` makes it ``untrusted`` when the judge's position consistency is lower
(or unmeasured). With none of these it is ``not scored``: its losing cases fail as items, the
figures are reported, and nothing is gated.

Two things hold whatever the settings, since without them a gate would switch itself off:
- A benchmark whose cases pair with no baseline output (case ids or codes differ, the baseline
  recorded no outputs, or there is no baseline) fails, naming the baseline; one partly paired
  says its coverage (``paired 40 of 60 cases``).
- A judge whose position consistency is measured and below ``DEFAULT_MIN_CONSISTENCY`` (½) makes
  the gate ``untrusted`` when the benchmark sets no ``judge.min_consistency`` of its own. A judge
  that reads the outputs answers most pairs alike in both orders; one that always names the same
  position (or answers at random) agrees with itself in none (or half) of them. ``min_consistency:
  0`` turns it off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .gates import BenchmarkGate, why
from .pairwise_stats import PairwiseFigures, pairwise_figures, position_counts
from .records import CaseRecord, PairwiseRecord

PAIRWISE_RULE = "pairwise"
DEFAULT_MIN_CONSISTENCY = 0.5


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


@dataclass(frozen=True)
class Pairing:
    """How a pairwise benchmark's cases found a baseline output: ``cases`` of this run, ``paired``
    of them with one, and the baseline as the run saw it for this benchmark (``baseline``, which
    names it and says why cases went unpaired)."""

    cases: int
    paired: int
    baseline: str = ""

    def nothing_paired(self) -> str:
        where = f": {self.baseline}" if self.baseline else ""
        return f"no case paired with the baseline (paired 0 of {self.cases} cases){where}"

    def coverage(self) -> str:
        """``paired 4 of 6 cases`` when some cases have no baseline output, else empty."""
        return f"paired {self.paired} of {self.cases} cases" if self.paired < self.cases else ""


def _pct(value: float) -> str:
    return f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def worse_detail(figures: PairwiseFigures) -> str:
    return (
        f"significantly worse than the baseline: {figures.wins} win(s), {figures.losses} loss(es) "
        f"(sign test p = {figures.p_adjusted:.3g} Holm-adjusted)"
    )


def pairwise_gate(
    gate: BenchmarkGate, figures: PairwiseFigures, rules: PairwiseRules, pairing: Pairing | None = None
) -> BenchmarkGate:
    """``gate`` decided by its pairwise figures and ``rules`` (a significantly worse candidate
    under ``fail_on worse`` fails it as a regression does: nothing excuses it); with ``pairing``,
    one that paired no case fails and one partly paired says its coverage."""
    gate = replace(gate, gate_rule=PAIRWISE_RULE, override=None, detail="")
    if pairing is not None and pairing.cases and not pairing.paired:
        return replace(gate, override="fail", detail=pairing.nothing_paired())
    decided = _decided(gate, figures, rules)
    coverage = pairing.coverage() if pairing is not None and figures.n else ""
    if not coverage:
        return decided
    if decided.regression:
        return replace(decided, regression=f"{decided.regression}; {coverage}")
    said = why(decided)
    return replace(decided, detail=f"{said}; {coverage}" if said else coverage)


def _untrusted(figures: PairwiseFigures, rules: PairwiseRules) -> str:
    """Why the judge's position consistency does not let its answers gate, or empty."""
    consistency = figures.position_consistency
    minimum = rules.min_consistency
    if minimum is None:  # the default: a judge whose consistency was measured, and is below ½
        if consistency is None or consistency >= DEFAULT_MIN_CONSISTENCY:
            return ""
        limit = f"judge.min_consistency {DEFAULT_MIN_CONSISTENCY:.0%} (its default)"
    elif consistency is None or consistency < minimum:
        limit = f"judge.min_consistency {_pct(minimum)}"
    else:
        return ""
    measured = (
        "not measured (no pair was judged in both orders)"
        if consistency is None
        else f"{_pct(consistency)} of {figures.judged} pairs"
    )
    return f"judge position consistency {measured}, below {limit}"


def _decided(gate: BenchmarkGate, figures: PairwiseFigures, rules: PairwiseRules) -> BenchmarkGate:
    if figures.n == 0:
        return gate  # no paired case with an outcome: "no verdicts", "partial" or errors say why
    if rules.fail_on_worse and figures.verdict == "worse":
        gate = replace(gate, regression=worse_detail(figures))
    untrusted = _untrusted(figures, rules)
    if untrusted:
        return replace(gate, override="untrusted", detail=untrusted)
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
    positions = {
        code: position_counts([a.winner for p in pairs if p.consistent is not None for a in p.answers])
        for code, pairs in by_benchmark.items()
    }
    figures = pairwise_figures(
        outcomes, unpaired, consistent=consistent, positions=positions, margin=margin, alpha=alpha
    )
    by_code = {f.benchmark: f for f in figures}
    decided = []
    for gate in gates:
        if gate.code in by_code:
            pairs = by_benchmark[gate.code]
            first = pairs[0]
            rules = PairwiseRules(fail_on == "worse", first.gate, first.min_consistency, margin)
            pairing = Pairing(len(pairs), sum(not p.unpaired for p in pairs), first.baseline_note)
            gate = pairwise_gate(gate, by_code[gate.code], rules, pairing)
        decided.append(gate)
    return decided, tuple(figures)
