"""A pairwise benchmark's figures at their edges: what a wrong setting or outcome says, a p-value
exactly at alpha, non-inferiority of one case and of none, and the answers' positions counted."""

from __future__ import annotations

import pytest

from pytest_llmjudge.gating.pairwise_stats import benchmark_figures, position_counts


def test_a_margin_out_of_range_and_an_unknown_outcome_are_named() -> None:
    with pytest.raises(ValueError, match=r"^margin must lie strictly between 0 and 1, got 1.5$"):
        benchmark_figures(["win"], margin=1.5)
    with pytest.raises(
        ValueError, match=r"^unknown pairwise outcomes \['won'\]; use win, loss, tie, inconsistent$"
    ):
        benchmark_figures(["won", "win"])


def test_a_p_value_equal_to_alpha_is_not_significant() -> None:
    losses = ["loss"] * 6  # sign test p = 2 / 2**6 = 0.03125
    assert benchmark_figures(losses, alpha=0.03125).verdict == "inconclusive"
    assert benchmark_figures(losses, alpha=0.0313).verdict == "worse"


def test_one_benchmark_s_adjusted_p_is_its_own_and_its_defaults_are_empty() -> None:
    figures = benchmark_figures(["loss"] * 6)
    assert figures.p_adjusted == figures.p_value == 0.03125
    assert (figures.benchmark, figures.unpaired) == ("", 0)


def test_non_inferiority_needs_a_paired_case() -> None:
    assert not benchmark_figures([], margin=0.5).non_inferior  # its interval (0, 1) proves nothing
    one = benchmark_figures(["win"], margin=0.3)  # Wilson's lower bound of 1 of 1: 20.7%
    assert one.win_rate_ci[0] == pytest.approx(0.2065, abs=1e-4) and one.non_inferior


def test_positions_count_each_answer_naming_a_b_or_a_tie() -> None:
    assert position_counts(["A", "B", "B", "tie", None, "tie", "tie"]) == (1, 2, 3)
    assert position_counts([]) == (0, 0, 0)
