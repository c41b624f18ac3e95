"""Release statistics exactly at their edges: a p-value equal to alpha, a detectable effect equal
to the margin, the fewest pairs a comparison can use, and the figures the results file records."""

from __future__ import annotations

import math

import pytest

from pytest_llmjudge.gating.calibration import CorrectedRate, corrected_interval
from pytest_llmjudge.gating.statistics import (
    case_rate_interval,
    compare_paired,
    mcnemar_exact_p,
    minimum_detectable_effect,
)

# 5 of 5 discordant pairs one way: an exact McNemar p of 2 · 0.5⁵
ALPHA_AT_FIVE = 0.0625


def runs(n: int, regressed: int = 0) -> tuple[dict[str, bool], dict[str, bool]]:
    before = {f"c{i}": True for i in range(n)}
    return before, {case: i >= regressed for i, case in enumerate(before)}


def test_a_p_value_equal_to_alpha_is_not_significant() -> None:
    assert mcnemar_exact_p(5, 0) == ALPHA_AT_FIVE
    comparison = compare_paired(*runs(5, regressed=5), alpha=ALPHA_AT_FIVE)
    assert (comparison.p_value, comparison.verdict) == (ALPHA_AT_FIVE, "inconclusive")
    assert compare_paired(*runs(5, regressed=5), alpha=0.07).verdict == "regression"


def test_the_detectable_effect_needs_a_p_value_below_alpha() -> None:
    # b = 5 reaches p = alpha, not below it: 6 of 10 pairs are needed
    assert minimum_detectable_effect([0] * 10, alpha=ALPHA_AT_FIVE, power=0.8) == 0.6


def test_two_pairs_are_enough_to_detect_something() -> None:
    assert minimum_detectable_effect([0, 0], alpha=0.6, power=0.8) == 1.0
    assert minimum_detectable_effect([0], alpha=0.6, power=0.8) == math.inf


def test_a_detectable_effect_equal_to_the_margin_clears_the_candidate() -> None:
    comparison = compare_paired(*runs(30), margin=0.2)  # 6 of 30 pairs: 0.2
    assert (comparison.mde, comparison.verdict) == (0.2, "no significant change")
    assert compare_paired(*runs(30), margin=0.19).verdict == "inconclusive"


@pytest.mark.parametrize("name", ["alpha", "power"])
def test_a_probability_out_of_range_is_named(name: str) -> None:
    settings = {"alpha": 0.05, "power": 0.8, name: 1.0}
    with pytest.raises(ValueError, match=f"^{name} must lie strictly between 0 and 1, got 1.0$"):
        minimum_detectable_effect([0, 0, 0], **settings)


def test_a_rate_interval_in_the_results_file() -> None:
    interval = case_rate_interval(3, 4, 6)
    assert interval.to_dict() == {
        "rate": 0.75,
        "low": interval.low,
        "high": interval.high,
        "n_cases": 4,
        "n_samples": 6,
        "method": "wilson",
        "low_evidence": True,
        "basis": "cases",
    }
    assert 0.30 < interval.low < interval.high < 0.96


def test_a_corrected_rate_in_the_results_file() -> None:
    assert CorrectedRate(0.7, 0.6, 0.8, False, 3, 2000).to_dict() == {
        "theta": 0.7,
        "low": 0.6,
        "high": 0.8,
        "chance": False,
        "seed": 3,
        "resamples": 2000,
    }


GOOD_JUDGE = [(True, True)] * 9 + [(True, False)] + [(False, False)] * 9 + [(False, True)]


def test_a_corrected_rate_at_its_ends_stays_within_zero_and_one() -> None:
    assert corrected_interval(GOOD_JUDGE, [True] * 30) == CorrectedRate(1.0, 1.0, 1.0, False, 0, 2000)
    assert corrected_interval(GOOD_JUDGE, [False] * 30) == CorrectedRate(0.0, 0.0, 0.0, False, 0, 2000)


def test_a_corrected_rate_without_a_figure_keeps_its_settings() -> None:
    chance = [(True, True), (True, False), (False, True), (False, False)]
    assert corrected_interval(chance, [True], seed=5, resamples=10) == CorrectedRate(
        None, None, None, True, 5, 10
    )
    assert corrected_interval(GOOD_JUDGE, [], seed=5, resamples=10) == CorrectedRate(
        None, None, None, False, 5, 10
    )
    # one labelled case a class: the only resample of seed 3 loses a class, so there is no interval
    lost = corrected_interval([(True, True), (False, False)], [True, False], seed=3, resamples=1)
    assert lost == CorrectedRate(0.5, None, None, False, 3, 1)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"resamples": 0}, "resamples must be at least 1, got 0"),
        ({"confidence": 0.0}, "confidence must lie strictly between 0 and 1, got 0.0"),
        ({"confidence": 1.0}, "confidence must lie strictly between 0 and 1, got 1.0"),
    ],
)
def test_corrected_interval_settings_out_of_range(settings: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        corrected_interval(GOOD_JUDGE, [True], **settings)  # type: ignore[arg-type]
