"""Release-gate statistics, each figure checked against an independent computation on fixed data."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from statistics import NormalDist, stdev

import pytest

from pytest_llmjudge.gating.statistics import (
    DEFAULT_ALPHA,
    DEFAULT_MARGIN,
    LOW_EVIDENCE_VERDICTS,
    case_rate_interval,
    compare_benchmarks,
    compare_paired,
    mcnemar_exact_p,
    minimum_detectable_effect,
    wilson_interval,
)


def z_quantile(probability: float) -> float:
    return NormalDist().inv_cdf(probability)


def wilson_by_formula(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval written out."""
    z = z_quantile(1 - (1 - confidence) / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def exact_binomial_two_sided(b: int, c: int) -> float:
    """Two-sided exact binomial p (p = 0.5): the outcomes no likelier than the observed one, summed."""
    n = b + c
    if n == 0:
        return 1.0
    pmf = [math.comb(n, k) / (1 << n) for k in range(n + 1)]
    return min(1.0, sum(prob for prob in pmf if prob <= pmf[b] * (1 + 1e-12)))


def runs(b: int, c: int, both_pass: int = 0, both_fail: int = 0) -> tuple[dict[str, bool], dict[str, bool]]:
    """A baseline and a candidate run with b pass→fail, c fail→pass and the given concordant pairs."""
    outcomes = [(True, False)] * b + [(False, True)] * c + [(True, True)] * both_pass
    outcomes += [(False, False)] * both_fail
    baseline = {f"case-{i:04d}": base for i, (base, _) in enumerate(outcomes)}
    candidate = {f"case-{i:04d}": cand for i, (_, cand) in enumerate(outcomes)}
    return baseline, candidate


# -- Wilson ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("successes", "n", "confidence"),
    [(0, 10, 0.95), (10, 10, 0.95), (7, 10, 0.95), (45, 50, 0.95), (1, 3, 0.9), (512, 1000, 0.99)],
)
def test_wilson_matches_the_formula(successes: int, n: int, confidence: float) -> None:
    low, high = wilson_interval(successes, n, confidence)
    expected_low, expected_high = wilson_by_formula(successes, n, confidence)
    assert low == pytest.approx(expected_low, abs=1e-12)
    assert high == pytest.approx(expected_high, abs=1e-12)
    assert 0.0 <= low <= high <= 1.0


def test_wilson_without_trials_is_the_whole_range() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
    with pytest.raises(ValueError):
        wilson_interval(1, 4, confidence=1.0)


# -- The gated pass rate: case verdicts ------------------------------------------------------------


def test_the_gate_interval_is_wilson_over_case_verdicts() -> None:
    interval = case_rate_interval(17, 25)
    assert (interval.method, interval.basis) == ("wilson", "cases")
    assert interval.rate == 17 / 25
    assert (interval.low, interval.high) == pytest.approx(wilson_by_formula(17, 25), abs=1e-12)
    assert (interval.n_cases, interval.n_samples, interval.low_evidence) == (25, 25, False)


def test_repeated_samples_do_not_narrow_the_interval() -> None:
    # 4 cases of 5 samples each: 4 verdicts, not 20, so low evidence and Wilson's width for 4
    interval = case_rate_interval(3, 4, samples=20)
    assert (interval.low, interval.high) == pytest.approx(wilson_by_formula(3, 4), abs=1e-12)
    assert (interval.n_cases, interval.n_samples, interval.low_evidence) == (4, 20, True)


def test_low_evidence_below_twenty_case_verdicts() -> None:
    assert LOW_EVIDENCE_VERDICTS == 20
    assert case_rate_interval(19, 19).low_evidence
    assert not case_rate_interval(20, 20).low_evidence
    assert case_rate_interval(7, 7, samples=21).low_evidence  # samples are not cases


def test_no_verdicts() -> None:
    interval = case_rate_interval(0, 0)
    assert (interval.rate, interval.low, interval.high, interval.n_cases) == (0.0, 0.0, 1.0, 0)
    assert interval.low_evidence
    assert json.loads(json.dumps(interval.to_dict()))["basis"] == "cases"


# -- Paired comparison ----------------------------------------------------------------------------


def test_defaults() -> None:
    assert (DEFAULT_MARGIN, DEFAULT_ALPHA) == (0.05, 0.05)


@pytest.mark.parametrize(("b", "c"), [(12, 2), (2, 12), (5, 5), (0, 0), (1, 0), (6, 0), (30, 17), (0, 9)])
def test_mcnemar_p_is_the_exact_binomial(b: int, c: int) -> None:
    assert mcnemar_exact_p(b, c) == pytest.approx(exact_binomial_two_sided(b, c), abs=1e-9)


def test_twelve_against_two_is_a_regression() -> None:
    baseline, candidate = runs(12, 2, both_pass=70, both_fail=16)
    result = compare_paired(baseline, candidate, benchmark="qa")
    # Symmetric null: twice the lower tail, written out.
    by_hand = 2 * sum(math.comb(14, k) for k in range(3)) / 2**14
    assert result.p_value == pytest.approx(by_hand, abs=1e-9)
    assert result.p_value == pytest.approx(exact_binomial_two_sided(12, 2), abs=1e-9)
    assert result.p_adjusted == result.p_value
    assert (result.b, result.c, result.n_paired) == (12, 2, 100)
    assert result.difference == pytest.approx(-0.10)
    assert result.baseline_pass_rate == pytest.approx(0.82)
    assert result.candidate_pass_rate == pytest.approx(0.72)
    assert result.verdict == "regression"
    assert result.benchmark == "qa"


def test_the_same_counts_the_other_way_are_an_improvement() -> None:
    baseline, candidate = runs(2, 12, both_pass=70, both_fail=16)
    result = compare_paired(baseline, candidate)
    assert result.verdict == "improvement"
    assert result.difference == pytest.approx(0.10)


def test_balanced_discordance_is_not_a_regression() -> None:
    baseline, candidate = runs(5, 5, both_pass=80, both_fail=10)
    result = compare_paired(baseline, candidate)
    assert result.p_value == pytest.approx(1.0, abs=1e-12)
    assert result.difference == 0.0
    assert result.verdict != "regression"


@pytest.mark.parametrize(("b", "c", "both_pass"), [(0, 0, 10), (1, 0, 9)])
def test_ten_cases_cannot_show_a_five_point_margin(b: int, c: int, both_pass: int) -> None:
    baseline, candidate = runs(b, c, both_pass=both_pass)
    result = compare_paired(baseline, candidate, margin=0.05)
    assert result.verdict == "inconclusive"
    # The exact test needs 6 one-sided flips out of 10 (2 / 2**6 < 0.05 <= 2 / 2**5).
    assert result.mde >= 0.6


def test_a_large_quiet_run_is_no_significant_change() -> None:
    baseline, candidate = runs(3, 3, both_pass=900, both_fail=94)
    result = compare_paired(baseline, candidate)
    assert result.mde < DEFAULT_MARGIN
    assert result.verdict == "no significant change"


def exact_mde_by_hand(n: int, alpha: float) -> float:
    for b in range(1, n + 1):
        if 2 * 0.5**b < alpha:
            return b / n
    return math.inf


@pytest.mark.parametrize(
    ("b", "c", "both_pass", "both_fail", "alpha", "power"),
    [
        (12, 2, 70, 16, 0.05, 0.8),
        (3, 3, 900, 94, 0.05, 0.8),
        (20, 11, 150, 19, 0.01, 0.9),
        (0, 0, 40, 0, 0.05, 0.8),
    ],
)
def test_mde_is_the_larger_of_the_exact_and_normal_bounds(
    b: int, c: int, both_pass: int, both_fail: int, alpha: float, power: float
) -> None:
    baseline, candidate = runs(b, c, both_pass, both_fail)
    differences = [int(candidate[case]) - int(baseline[case]) for case in baseline]
    n = len(differences)
    normal = (z_quantile(1 - alpha / 2) + z_quantile(power)) * stdev(differences) / math.sqrt(n)
    expected = max(exact_mde_by_hand(n, alpha), normal)
    result = compare_paired(baseline, candidate, alpha=alpha, power=power)
    assert result.mde == pytest.approx(expected, rel=1e-9)
    assert minimum_detectable_effect(differences, alpha=alpha, power=power) == pytest.approx(
        expected, rel=1e-9
    )


def test_mde_is_infinite_when_nothing_could_be_significant() -> None:
    assert minimum_detectable_effect([0, -1, 0, 0], alpha=0.05, power=0.8) == math.inf
    assert minimum_detectable_effect([], alpha=0.05, power=0.8) == math.inf
    assert minimum_detectable_effect([1], alpha=0.05, power=0.8) == math.inf


def test_difference_interval_is_normal_with_the_paired_standard_error() -> None:
    baseline, candidate = runs(12, 2, both_pass=70, both_fail=16)
    differences = [int(candidate[case]) - int(baseline[case]) for case in baseline]
    mean = sum(differences) / len(differences)
    half = z_quantile(0.975) * stdev(differences) / math.sqrt(len(differences))
    result = compare_paired(baseline, candidate)
    assert result.difference_ci == pytest.approx((mean - half, mean + half), abs=1e-12)


def test_cases_in_one_run_only_are_listed_and_not_paired() -> None:
    baseline, candidate = runs(12, 2, both_pass=70, both_fail=16)
    baseline["only-base"] = False
    candidate["only-cand-b"] = True
    candidate["only-cand-a"] = False
    result = compare_paired(baseline, candidate)
    assert result.unpaired.baseline_only == ("only-base",)
    assert result.unpaired.candidate_only == ("only-cand-a", "only-cand-b")
    assert (result.n_paired, result.b, result.c) == (100, 12, 2)
    assert result.difference == pytest.approx(-0.10)
    # Pass rates are over each run's own cases.
    assert result.baseline_pass_rate == pytest.approx(82 / 101)
    assert result.candidate_pass_rate == pytest.approx(73 / 102)


def test_nothing_paired() -> None:
    result = compare_paired({"a": True}, {"b": False})
    assert (result.n_paired, result.difference, result.difference_ci) == (0, None, None)
    assert (result.p_value, result.mde, result.verdict) == (1.0, math.inf, "inconclusive")
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["mde"] is None
    assert data["unpaired"] == {"baseline_only": ["a"], "candidate_only": ["b"]}
    assert compare_paired({}, {}).baseline_pass_rate is None


def test_to_dict_is_json_ready_with_the_results_file_fields() -> None:
    baseline, candidate = runs(12, 2, both_pass=70, both_fail=16)
    data = compare_paired(baseline, candidate, benchmark="qa").to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert set(data) == {
        "benchmark",
        "baseline_pass_rate",
        "candidate_pass_rate",
        "difference",
        "difference_ci",
        "b",
        "c",
        "p_value",
        "p_adjusted",
        "verdict",
        "unpaired",
        "mde",
        "n_paired",
        "judge_change",
    }
    assert isinstance(data["difference_ci"], list)


def test_rejects_nonsense_parameters() -> None:
    with pytest.raises(ValueError):
        compare_paired({}, {}, alpha=0.0)
    with pytest.raises(ValueError):
        compare_paired({}, {}, margin=-0.1)
    with pytest.raises(ValueError):
        compare_paired({}, {}, power=1.0)


def test_holm_across_benchmarks_by_hand() -> None:
    pairs = {
        "unchanged": runs(5, 5, both_pass=90),
        "clear": runs(12, 2, both_pass=86),
        "borderline": runs(10, 2, both_pass=88),
    }
    results = compare_benchmarks(pairs, margin=0.05, alpha=0.05)
    assert [r.benchmark for r in results] == ["unchanged", "clear", "borderline"]
    p_unchanged = exact_binomial_two_sided(5, 5)
    p_clear = exact_binomial_two_sided(12, 2)
    p_borderline = exact_binomial_two_sided(10, 2)
    assert p_clear < p_borderline < p_unchanged
    # Holm: the i-th smallest of m p-values times (m − i + 1), kept monotone, capped at 1.
    adjusted_clear = min(1.0, 3 * p_clear)
    adjusted_borderline = max(adjusted_clear, min(1.0, 2 * p_borderline))
    adjusted_unchanged = max(adjusted_borderline, min(1.0, p_unchanged))
    assert [r.p_adjusted for r in results] == pytest.approx(
        [adjusted_unchanged, adjusted_clear, adjusted_borderline], abs=1e-9
    )
    assert [r.p_value for r in results] == pytest.approx([p_unchanged, p_clear, p_borderline], abs=1e-9)
    verdicts = {r.benchmark: r.verdict for r in results}
    assert verdicts["clear"] == "regression"
    # Significant on its own (p ≈ 0.039), not once three benchmarks are tested.
    assert compare_paired(*pairs["borderline"]).verdict == "regression"
    assert verdicts["borderline"] == "inconclusive"


def test_no_benchmarks() -> None:
    assert compare_benchmarks({}) == []


def test_statistics_libraries_load_only_when_computing() -> None:
    code = (
        "import sys, pytest_llmjudge.gating\n"
        "before = set(sys.modules)\n"
        "import pytest_llmjudge.gating.statistics, pytest_llmjudge.gating.calibration\n"
        "new = set(sys.modules) - before\n"
        "print(sorted(m for m in new if m.split('.')[0] in {'numpy', 'scipy', 'statsmodels'}))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"
