"""Pairwise statistics: win rate with ties as half, sign test, Holm, verdicts, position consistency."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction

import pytest

from pytest_llmjudge.gating.pairwise_stats import (
    PairwiseFigures,
    benchmark_figures,
    pairwise_figures,
    sign_test_p,
)
from pytest_llmjudge.gating.statistics import minimum_detectable_effect, wilson_interval


def outcomes(wins: int = 0, losses: int = 0, ties: int = 0, inconsistent: int = 0) -> list[str]:
    return ["win"] * wins + ["loss"] * losses + ["tie"] * ties + ["inconsistent"] * inconsistent


def exact_sign_test(wins: int, losses: int) -> float:
    """Two-sided exact binomial test at p = ½, summed in exact fractions: every outcome of the
    m = wins + losses non-tied pairs at most as likely as the one observed."""
    m = wins + losses
    if m == 0:
        return 1.0
    observed = math.comb(m, wins)
    total = sum(Fraction(math.comb(m, k), 2**m) for k in range(m + 1) if math.comb(m, k) <= observed)
    return float(min(total, Fraction(1)))


# -- sign test ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wins", "losses"),
    [
        (0, 0),
        (1, 0),
        (0, 1),
        (5, 5),
        (6, 0),
        (10, 2),
        (2, 10),
        (7, 3),
        (15, 5),
        (30, 18),
        (60, 40),
        (3, 97),
        (250, 200),
    ],
)
def test_sign_test_equals_an_exact_binomial_computation(wins: int, losses: int) -> None:
    assert sign_test_p(wins, losses) == pytest.approx(exact_sign_test(wins, losses), abs=1e-9)
    figures = benchmark_figures(outcomes(wins, losses, ties=4, inconsistent=3))
    assert figures.p_value == pytest.approx(exact_sign_test(wins, losses), abs=1e-9)  # ties left out


def test_sign_test_by_hand() -> None:
    assert sign_test_p(6, 0) == pytest.approx(2 / 64, abs=1e-12)
    assert sign_test_p(5, 0) == pytest.approx(2 / 32, abs=1e-12)
    assert sign_test_p(3, 3) == 1.0


# -- win rate and its interval --------------------------------------------------------------------


def test_win_rate_counts_ties_and_inconsistent_pairs_as_half() -> None:
    figures = benchmark_figures(outcomes(wins=6, losses=2, ties=1, inconsistent=1))
    assert (figures.wins, figures.losses, figures.ties, figures.inconsistent, figures.n) == (6, 2, 1, 1, 10)
    assert figures.win_rate == pytest.approx((6 + 0.5 + 0.5) / 10)
    assert figures.win_rate_ci == pytest.approx(wilson_interval(7, 10))
    only_ties = benchmark_figures(outcomes(ties=3, inconsistent=1))
    assert only_ties.win_rate == 0.5 and only_ties.p_value == 1.0


def test_wilson_with_half_successes_by_hand() -> None:
    figures = benchmark_figures(outcomes(wins=3, losses=1, ties=1))  # 3.5 of 5
    z = 1.959963984540054
    p, n = 3.5 / 5, 5
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert figures.win_rate_ci == pytest.approx((centre - half, centre + half), abs=1e-9)


def test_no_pairs_has_no_rate_and_the_widest_interval() -> None:
    figures = benchmark_figures([], unpaired=4)
    assert figures.win_rate is None and figures.win_rate_ci == (0.0, 1.0)
    assert figures.n == 0 and figures.unpaired == 4
    assert figures.verdict == "inconclusive" and not figures.non_inferior
    assert figures.position_consistency is None and figures.judged == 0


# -- verdicts -------------------------------------------------------------------------------------


def test_significant_wins_are_better_and_losses_worse() -> None:
    assert benchmark_figures(outcomes(wins=40, losses=10, ties=50)).verdict == "better"
    assert benchmark_figures(outcomes(wins=10, losses=40, ties=50)).verdict == "worse"


def test_inconclusive_when_too_few_non_tied_pairs_to_see_the_margin() -> None:
    # 5 wins without a loss cannot reach p < 0.05 (2/32): nothing at this size could be seen
    few = benchmark_figures(outcomes(wins=5))
    assert few.p_value == pytest.approx(0.0625) and few.mde == math.inf
    assert few.verdict == "inconclusive"
    small = benchmark_figures(outcomes(wins=3, losses=2, ties=5))
    assert small.mde > 0.05 and small.verdict == "inconclusive"
    # many pairs, almost all tied: a difference of the margin would have shown
    settled = benchmark_figures(outcomes(wins=3, losses=2, ties=395))
    assert settled.mde <= 0.05 and settled.verdict == "no significant difference"


def test_mde_is_half_the_paired_mde_on_the_win_rate_scale() -> None:
    scores = [1] * 12 + [-1] * 8 + [0] * 30
    figures = benchmark_figures(outcomes(wins=12, losses=8, ties=20, inconsistent=10))
    assert figures.mde == pytest.approx(minimum_detectable_effect(scores, alpha=0.05, power=0.8) / 2)
    # the exact bound: 6 wins and no loss is the fewest the sign test finds at alpha 0.05
    all_ties = benchmark_figures(outcomes(ties=600))
    assert all_ties.mde == pytest.approx(6 / (2 * 600))


def test_margin_decides_between_inconclusive_and_no_difference() -> None:
    data = outcomes(wins=20, losses=18, ties=62)
    assert benchmark_figures(data, margin=0.05).verdict == "inconclusive"
    assert benchmark_figures(data, margin=0.2).verdict == "no significant difference"


def test_non_inferior_when_the_lower_bound_reaches_half_minus_margin() -> None:
    even = benchmark_figures(outcomes(wins=200, losses=200, ties=600))
    assert 0.45 <= even.win_rate_ci[0] < 0.5 and even.non_inferior
    assert not benchmark_figures(outcomes(wins=200, losses=200, ties=600), margin=0.01).non_inferior
    # Wilson counts a tie as half a success, with a success's variance: conservative with ties
    assert not benchmark_figures(outcomes(wins=45, losses=45, ties=110)).non_inferior
    assert not benchmark_figures(outcomes(wins=3, losses=3, ties=4)).non_inferior  # too small to show it
    assert not benchmark_figures(outcomes(wins=20, losses=60, ties=20)).non_inferior


def test_position_consistency_is_consistent_over_judged_pairs() -> None:
    # 8 pairs, 2 of them identical outputs (ties without a call): 6 judged, 4 consistent
    figures = benchmark_figures(
        outcomes(wins=3, ties=3, inconsistent=2), consistent=[True, True, False, True, False, True]
    )
    assert figures.judged == 6 and figures.position_consistency == pytest.approx(4 / 6)


def test_unknown_outcomes_and_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown pairwise outcomes"):
        benchmark_figures(["win", "draw"])
    with pytest.raises(ValueError):
        benchmark_figures(outcomes(wins=1), margin=0.0)
    with pytest.raises(ValueError):
        benchmark_figures(outcomes(wins=1), alpha=1.5)


# -- across benchmarks ------------------------------------------------------------------------------


def test_holm_across_three_benchmarks_by_hand() -> None:
    data = {
        "even": outcomes(wins=5, losses=5, ties=90),
        "clear": outcomes(wins=12, losses=2, ties=86),
        "borderline": outcomes(wins=10, losses=2, ties=88),
    }
    results = pairwise_figures(data, {}, margin=0.05, alpha=0.05)
    assert [r.benchmark for r in results] == ["even", "clear", "borderline"]
    p_even, p_clear, p_borderline = exact_sign_test(5, 5), exact_sign_test(12, 2), exact_sign_test(10, 2)
    assert p_clear < p_borderline < p_even
    # Holm: the i-th smallest of m p-values times (m − i + 1), kept monotone, capped at 1.
    adjusted_clear = min(1.0, 3 * p_clear)
    adjusted_borderline = max(adjusted_clear, min(1.0, 2 * p_borderline))
    adjusted_even = max(adjusted_borderline, min(1.0, p_even))
    assert [r.p_adjusted for r in results] == pytest.approx(
        [adjusted_even, adjusted_clear, adjusted_borderline], abs=1e-9
    )
    assert [r.p_value for r in results] == pytest.approx([p_even, p_clear, p_borderline], abs=1e-9)
    verdicts = {r.benchmark: r.verdict for r in results}
    assert verdicts["clear"] == "better"
    # significant on its own (p ≈ 0.039), not once three benchmarks are tested
    assert benchmark_figures(data["borderline"]).verdict == "better"
    borderline = results[2]
    assert borderline.mde <= 0.05 and verdicts["borderline"] == "no significant difference"
    assert [r.verdict for r in pairwise_figures(data, {}, margin=0.04)][2] == "inconclusive"


def test_benchmarks_with_only_unpaired_cases_are_listed_last() -> None:
    results = pairwise_figures(
        {"A": outcomes(wins=2, ties=1)}, {"A": 1, "B": 3}, consistent={"A": [True, False, True]}
    )
    assert [(r.benchmark, r.n, r.unpaired) for r in results] == [("A", 3, 1), ("B", 0, 3)]
    assert results[0].position_consistency == pytest.approx(2 / 3)
    assert pairwise_figures({}) == []


def test_to_dict_is_json_ready() -> None:
    data = benchmark_figures(outcomes(wins=2), benchmark="X").to_dict()
    assert data["mde"] is None  # infinite: nothing detectable with 2 pairs
    assert data["win_rate_ci"] == list(wilson_interval(2, 2))
    assert set(data) >= {field for field in PairwiseFigures.__dataclass_fields__} - {"win_rate_ci"}


def test_statistics_libraries_load_only_when_computing() -> None:
    code = (
        "import sys, pytest_llmjudge.gating\n"
        "before = set(sys.modules)\n"
        "import pytest_llmjudge.gating.pairwise_stats, pytest_llmjudge.judging.pairwise_verdict\n"
        "new = set(sys.modules) - before\n"
        "heavy = {'numpy', 'scipy', 'statsmodels', 'pydantic_ai'}\n"
        "print(sorted(m for m in new if m.split('.')[0] in heavy))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"
