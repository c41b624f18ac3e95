"""Release-gate statistics: pass-rate intervals and paired baseline comparisons.

scipy, statsmodels and numpy are imported inside the functions that compute: the plugin loads in
every pytest run, and most runs never reach a statistic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

LOW_EVIDENCE_VERDICTS = 20
DEFAULT_MARGIN = 0.05
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
# The paired-difference interval is descriptive (the verdict comes from the exact test), so its
# level stays fixed and the results file can label it without knowing alpha.
DIFFERENCE_CONFIDENCE = 0.95

# "judge changed": the baseline was judged by another judge (model string or snapshot), so the
# difference measures the judge as much as the model (``gating.drift``)
Verdict = Literal["regression", "improvement", "no significant change", "inconclusive", "judge changed"]


def _check_probability(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value!r}")


def _z(probability: float) -> float:
    """The standard normal quantile (the standard library's, so that a run's gate intervals do not
    import scipy: 1.5 s here, more than a cached run takes)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(probability)


def _clip(value: float, low: float, high: float) -> float:
    return min(high, max(low, value))


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``n``; (0, 1) when there is nothing to go on.

    ``successes`` may hold halves: a pairwise win rate counts each tie as half a win.
    """
    _check_probability("confidence", confidence)
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return (0.0, 1.0)
    # Wilson (1927), as statsmodels' proportion_confint(method="wilson") computes it (the tests
    # compare the two); written out so that every run's gate interval needs no scipy import.
    z = _z(1.0 - (1.0 - confidence) / 2.0)
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / denominator
    # Rounding can step a hair outside [0, 1] at 0 or n successes.
    return (_clip(centre - half, 0.0, 1.0), _clip(centre + half, 0.0, 1.0))


@dataclass(frozen=True)
class RateInterval:
    """A gate's pass rate with its interval, both over the cases' verdicts (``basis``): with
    repeats, each case's samples are reduced to its one verdict first, and the interval is of
    that rate, the one the gate compares. ``n_samples``: the judge samples behind the verdicts."""

    rate: float
    low: float
    high: float
    n_cases: int
    n_samples: int
    method: Literal["wilson"]
    low_evidence: bool
    basis: Literal["cases"] = "cases"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        return {
            "rate": self.rate,
            "low": self.low,
            "high": self.high,
            "n_cases": self.n_cases,
            "n_samples": self.n_samples,
            "method": self.method,
            "low_evidence": self.low_evidence,
            "basis": self.basis,
        }


def case_rate_interval(
    passed: int, verdicts: int, samples: int | None = None, confidence: float = 0.95
) -> RateInterval:
    """The pass rate of ``passed`` out of ``verdicts`` case verdicts, with its Wilson interval.

    Cases are the independent units: repeated samples of one case are not, and the gate counts
    each case once, by its reduced verdict. ``samples``: the judge samples the verdicts were
    reduced from (default: one each), for the label only. Low evidence: under 20 cases.
    """
    low, high = wilson_interval(passed, verdicts, confidence)
    rate = passed / verdicts if verdicts else 0.0
    n_samples = verdicts if samples is None else samples
    return RateInterval(rate, low, high, verdicts, n_samples, "wilson", verdicts < LOW_EVIDENCE_VERDICTS)


@dataclass(frozen=True)
class Unpaired:
    """Case ids present in only one of the two runs (sorted)."""

    baseline_only: tuple[str, ...]
    candidate_only: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    """One benchmark's paired baseline → candidate comparison, as the results file records it.

    ``mde`` is infinite when no effect could reach significance at this size (``None`` in
    ``to_dict``); ``difference`` and ``difference_ci`` are ``None`` without paired cases.
    """

    benchmark: str
    baseline_pass_rate: float | None
    candidate_pass_rate: float | None
    difference: float | None
    difference_ci: tuple[float, float] | None
    b: int
    c: int
    p_value: float
    p_adjusted: float
    verdict: Verdict
    unpaired: Unpaired
    mde: float
    n_paired: int
    judge_change: str | None = None  # how the judge differs from the baseline's (``drift.JudgeChange``)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (tuples as lists, an infinite MDE as null)."""
        return {
            "benchmark": self.benchmark,
            "baseline_pass_rate": self.baseline_pass_rate,
            "candidate_pass_rate": self.candidate_pass_rate,
            "difference": self.difference,
            "difference_ci": None if self.difference_ci is None else list(self.difference_ci),
            "b": self.b,
            "c": self.c,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "verdict": self.verdict,
            "unpaired": {
                "baseline_only": list(self.unpaired.baseline_only),
                "candidate_only": list(self.unpaired.candidate_only),
            },
            "mde": self.mde if math.isfinite(self.mde) else None,
            "n_paired": self.n_paired,
            "judge_change": self.judge_change,
        }


def _rate(run: Mapping[str, bool]) -> float | None:
    return sum(1 for passed in run.values() if passed) / len(run) if run else None


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs against a fair coin; 1.0 without any."""
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest  # type: ignore[import-untyped]

    return float(binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given (compare each with alpha)."""
    if not p_values:
        return []
    from statsmodels.stats.multitest import multipletests  # type: ignore[import-untyped]

    return [float(p) for p in multipletests(list(p_values), method="holm")[1]]


def minimum_detectable_effect(differences: Sequence[int], *, alpha: float, power: float) -> float:
    """The smallest |candidate − baseline| this run could detect; ``inf`` when none.

    The larger of two bounds over the n paired cases:

    - exact: b_min / n, where b_min is the smallest b ≤ n whose exact McNemar p with c = 0 is
      below ``alpha`` (no split of n pairs can be significant with a smaller difference);
      ``inf`` when no b ≤ n gets there;
    - normal: (z_{1−α/2} + z_power) · sd(d) / √n, with sd the sample standard deviation
      (ddof 1) of the observed paired differences d ∈ {−1, 0, 1}; ``inf`` below two pairs.
    """
    _check_probability("alpha", alpha)
    _check_probability("power", power)
    n = len(differences)
    if n < 2:
        return math.inf
    exact = math.inf
    # The p-value falls with b, so the first significant b is the smallest.
    for discordant in range(1, n + 1):
        if mcnemar_exact_p(discordant, 0) < alpha:
            exact = discordant / n
            break
    import numpy as np

    spread = float(np.std(np.array(differences, dtype=float), ddof=1))
    normal = (_z(1.0 - alpha / 2.0) + _z(power)) * spread / math.sqrt(n)
    return max(exact, normal)


def _verdict(
    p_adjusted: float, difference: float | None, mde: float, *, alpha: float, margin: float
) -> Verdict:
    if difference is not None and p_adjusted < alpha:
        if difference < 0:
            return "regression"
        if difference > 0:
            return "improvement"
    # Not significant: that only clears the candidate when the run could have seen the margin.
    return "inconclusive" if mde > margin else "no significant change"


def _difference_interval(differences: Sequence[int]) -> tuple[float, float] | None:
    n = len(differences)
    if n == 0:
        return None
    if n == 1:
        return (-1.0, 1.0)
    import numpy as np

    values = np.array(differences, dtype=float)
    mean = float(np.mean(values))
    half_width = _z(1.0 - (1.0 - DIFFERENCE_CONFIDENCE) / 2.0) * float(np.std(values, ddof=1)) / math.sqrt(n)
    return (_clip(mean - half_width, -1.0, 1.0), _clip(mean + half_width, -1.0, 1.0))


def compare_paired(
    baseline: Mapping[str, bool],
    candidate: Mapping[str, bool],
    *,
    benchmark: str = "",
    margin: float = DEFAULT_MARGIN,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> Comparison:
    """Compare one benchmark's runs case by case (paired by case id); p_adjusted is p_value here.

    b counts pass → fail, c fail → pass; the p-value is exact McNemar. Verdict: regression or
    improvement when significant, else "inconclusive" when the minimum detectable effect exceeds
    ``margin``, else "no significant change".
    """
    _check_probability("margin", margin)
    paired = sorted(baseline.keys() & candidate.keys())
    differences = [int(candidate[case]) - int(baseline[case]) for case in paired]
    b = sum(1 for d in differences if d < 0)
    c = sum(1 for d in differences if d > 0)
    difference = sum(differences) / len(differences) if differences else None
    p_value = mcnemar_exact_p(b, c)
    mde = minimum_detectable_effect(differences, alpha=alpha, power=power)
    return Comparison(
        benchmark=benchmark,
        baseline_pass_rate=_rate(baseline),
        candidate_pass_rate=_rate(candidate),
        difference=difference,
        difference_ci=_difference_interval(differences),
        b=b,
        c=c,
        p_value=p_value,
        p_adjusted=p_value,
        verdict=_verdict(p_value, difference, mde, alpha=alpha, margin=margin),
        unpaired=Unpaired(
            baseline_only=tuple(sorted(baseline.keys() - candidate.keys())),
            candidate_only=tuple(sorted(candidate.keys() - baseline.keys())),
        ),
        mde=mde,
        n_paired=len(paired),
    )


def compare_benchmarks(
    pairs: Mapping[str, tuple[Mapping[str, bool], Mapping[str, bool]]],
    *,
    margin: float = DEFAULT_MARGIN,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> list[Comparison]:
    """Compare every benchmark (name → (baseline, candidate)), Holm–Bonferroni across them, in order."""
    comparisons = [
        compare_paired(base, cand, benchmark=name, margin=margin, alpha=alpha, power=power)
        for name, (base, cand) in pairs.items()
    ]
    if not comparisons:
        return []
    adjusted = holm_adjusted([comp.p_value for comp in comparisons])
    return [
        replace(
            comp,
            p_adjusted=p,
            verdict=_verdict(p, comp.difference, comp.mde, alpha=alpha, margin=margin),
        )
        for comp, p in zip(comparisons, adjusted, strict=True)
    ]
