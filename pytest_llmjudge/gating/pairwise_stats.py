"""Pairwise release statistics: win rate, sign test and verdict per benchmark, Holm across them.

Each paired case has one outcome for the candidate (``win``, ``loss``, ``tie`` or
``inconsistent``, see ``judging.pairwise_verdict.outcome_of``); an inconsistent pair counts as a
tie everywhere below. The tests and intervals are those of the McNemar comparison beside this
module, on the same scale: a case scores +1 (win), 0 (tie) or −1 (loss), and the win rate with
ties as half is (1 + mean score) / 2.

- Win rate: (wins + (ties + inconsistent) / 2) / n, over the n paired cases with an outcome.
- Its 95 % interval: Wilson's, with each tie as half a success. A case's score in {0, ½, 1} with
  mean p has a variance of at most p(1 − p), the Bernoulli variance Wilson assumes, so ties only
  make it conservative; unlike Wald's it stays inside [0, 1] and behaves at small n.
- p-value: the exact two-sided sign test of wins against losses (binomial, p = ½, ties left
  out), which is McNemar's exact test on the discordant pairs.
- Minimum detectable effect, on the win-rate scale (|win rate − ½|): half the McNemar MDE of the
  scores (``statistics.minimum_detectable_effect``): the larger of the exact bound k / 2n (k the
  fewest wins without a loss that the sign test finds significant) and the normal-power bound.
- Verdict: ``better``/``worse`` when the Holm-adjusted p is below alpha; otherwise
  ``inconclusive`` when the MDE exceeds the margin (too few non-tied pairs to see it), else
  ``no significant difference``.
- Non-inferior: the interval's lower bound reaches ½ − margin.
- Position bias: of the answers to pairs judged in both orders, the share naming one position
  (``A`` or ``B``). A judge that reads the outputs names each about as often as the other (a
  better candidate is A in one order and B in the other); one that names the same position in
  at least ``POSITION_BIAS`` of them is mostly picking a position, not an output.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..judging.pairwise_verdict import OUTCOMES
from .statistics import (
    DEFAULT_ALPHA,
    DEFAULT_MARGIN,
    DEFAULT_POWER,
    _check_probability,
    holm_adjusted,
    mcnemar_exact_p,
    minimum_detectable_effect,
    wilson_interval,
)

PairwiseDecision = Literal["better", "worse", "no significant difference", "inconclusive"]
WIN_RATE_CONFIDENCE = 0.95
_SCORE = {"win": 1, "loss": -1, "tie": 0, "inconsistent": 0}
POSITION_BIAS = 0.75  # share of answers naming one position from which the judge is said to pick it


@dataclass(frozen=True)
class PairwiseFigures:
    """One benchmark's pairwise comparison of candidate against baseline.

    ``n``: paired cases with an outcome; ``unpaired``: cases in only one run (never judged);
    ``judged``: pairs the judge answered in both orders (identical outputs are ties without a
    call), the denominator of ``position_consistency``, which is ``None`` without any;
    ``positions``: how many of those pairs' answers named A, B, or a tie.
    ``win_rate`` is ``None`` and its interval (0, 1) when ``n`` is 0; ``mde`` is infinite when no
    effect could reach significance at this size (``None`` in ``to_dict``).
    """

    benchmark: str
    wins: int
    ties: int
    losses: int
    inconsistent: int
    unpaired: int
    n: int
    win_rate: float | None
    win_rate_ci: tuple[float, float]
    p_value: float
    p_adjusted: float
    verdict: PairwiseDecision
    mde: float
    judged: int
    position_consistency: float | None
    non_inferior: bool
    positions: tuple[int, int, int] = (0, 0, 0)

    @property
    def picked_position(self) -> tuple[str, int, int] | None:
        """``(position, answers naming it, answers)`` when the judge named one position in at least
        ``POSITION_BIAS`` of its answers to the pairs it judged in both orders, else None."""
        named_a, named_b, ties = self.positions
        answers = named_a + named_b + ties
        position, named = ("A", named_a) if named_a >= named_b else ("B", named_b)
        if answers and named >= POSITION_BIAS * answers:
            return position, named, answers
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (the interval as a list, an infinite MDE as null)."""
        return {
            "benchmark": self.benchmark,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "inconsistent": self.inconsistent,
            "unpaired": self.unpaired,
            "n": self.n,
            "win_rate": self.win_rate,
            "win_rate_ci": list(self.win_rate_ci),
            "win_rate_ci_method": "wilson, ties as half",
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "verdict": self.verdict,
            "mde": self.mde if math.isfinite(self.mde) else None,
            "judged": self.judged,
            "position_consistency": self.position_consistency,
            "non_inferior": self.non_inferior,
            "positions": dict(zip(("A", "B", "tie"), self.positions, strict=True)),
        }


def position_counts(winners: Sequence[str | None]) -> tuple[int, int, int]:
    """How many of ``winners`` (the answers to pairs judged in both orders) name A, B, a tie."""
    return winners.count("A"), winners.count("B"), winners.count("tie")


def sign_test_p(wins: int, losses: int) -> float:
    """Exact two-sided sign test of wins against losses (ties left out); 1.0 without either."""
    return mcnemar_exact_p(wins, losses)


def _verdict(figures: PairwiseFigures, p_adjusted: float, *, alpha: float, margin: float) -> PairwiseDecision:
    if p_adjusted < alpha and figures.wins != figures.losses:
        return "better" if figures.wins > figures.losses else "worse"
    # Not significant: that only clears the candidate when the run could have seen the margin.
    return "inconclusive" if figures.mde > margin else "no significant difference"


def benchmark_figures(
    outcomes: Sequence[str],
    *,
    benchmark: str = "",
    unpaired: int = 0,
    consistent: Sequence[bool] = (),
    positions: tuple[int, int, int] = (0, 0, 0),
    margin: float = DEFAULT_MARGIN,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> PairwiseFigures:
    """One benchmark's figures, not adjusted for others (``p_adjusted`` is ``p_value`` here).

    ``outcomes``: one per paired case; ``consistent``: one per pair the judge answered in both
    orders, whether its two answers agreed (``judging.pairwise_verdict.position_consistent``);
    ``positions``: the answers of those pairs naming A, B, or a tie.
    """
    _check_probability("margin", margin)
    unknown = sorted({o for o in outcomes if o not in OUTCOMES})
    if unknown:
        raise ValueError(f"unknown pairwise outcomes {unknown}; use {', '.join(OUTCOMES)}")
    wins, losses = outcomes.count("win"), outcomes.count("loss")
    ties, inconsistent = outcomes.count("tie"), outcomes.count("inconsistent")
    n = len(outcomes)
    half_wins = wins + (ties + inconsistent) / 2
    low, high = wilson_interval(half_wins, n, WIN_RATE_CONFIDENCE)
    p_value = sign_test_p(wins, losses)
    figures = PairwiseFigures(
        benchmark=benchmark,
        wins=wins,
        ties=ties,
        losses=losses,
        inconsistent=inconsistent,
        unpaired=unpaired,
        n=n,
        win_rate=half_wins / n if n else None,
        win_rate_ci=(low, high),
        p_value=p_value,
        p_adjusted=p_value,
        verdict="inconclusive",
        mde=minimum_detectable_effect([_SCORE[o] for o in outcomes], alpha=alpha, power=power) / 2,
        judged=len(consistent),
        position_consistency=sum(consistent) / len(consistent) if consistent else None,
        non_inferior=n > 0 and low >= 0.5 - margin,
        positions=positions,
    )
    return replace(figures, verdict=_verdict(figures, p_value, alpha=alpha, margin=margin))


def pairwise_figures(
    outcomes: Mapping[str, Sequence[str]],
    unpaired: Mapping[str, int] | None = None,
    *,
    consistent: Mapping[str, Sequence[bool]] | None = None,
    positions: Mapping[str, tuple[int, int, int]] | None = None,
    margin: float = DEFAULT_MARGIN,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> list[PairwiseFigures]:
    """Every benchmark's figures (name → outcomes), sign tests Holm-adjusted across them.

    In ``outcomes``' order, then benchmarks that only have unpaired cases.
    """
    unpaired = unpaired or {}
    consistent = consistent or {}
    positions = positions or {}
    names = [*outcomes, *(name for name in unpaired if name not in outcomes)]
    figures = [
        benchmark_figures(
            outcomes.get(name, ()),
            benchmark=name,
            unpaired=unpaired.get(name, 0),
            consistent=consistent.get(name, ()),
            positions=positions.get(name, (0, 0, 0)),
            margin=margin,
            alpha=alpha,
            power=power,
        )
        for name in names
    ]
    adjusted = holm_adjusted([f.p_value for f in figures])
    return [
        replace(f, p_adjusted=p, verdict=_verdict(f, p, alpha=alpha, margin=margin))
        for f, p in zip(figures, adjusted, strict=True)
    ]
