"""A pairwise benchmark's figures as the results file carries them, key by key."""

from __future__ import annotations

import math

from pytest_llmjudge.gating.pairwise_stats import benchmark_figures


def test_every_figure_reaches_the_results_file_under_its_name() -> None:
    outcomes = ["win"] * 30 + ["loss"] * 5 + ["tie"] * 4 + ["inconsistent"]
    figures = benchmark_figures(
        outcomes, benchmark="REL-1", unpaired=2, consistent=[True, False, True, True], positions=(3, 1, 2)
    )
    assert math.isfinite(figures.mde)
    assert figures.to_dict() == {
        "benchmark": "REL-1",
        "wins": 30,
        "ties": 4,
        "losses": 5,
        "inconsistent": 1,
        "unpaired": 2,
        "n": 40,
        "win_rate": figures.win_rate,
        "win_rate_ci": [figures.win_rate_ci[0], figures.win_rate_ci[1]],
        "win_rate_ci_method": "wilson, ties as half",
        "p_value": figures.p_value,
        "p_adjusted": figures.p_adjusted,
        "verdict": figures.verdict,
        "mde": figures.mde,
        "judged": figures.judged,
        "position_consistency": 0.75,
        "non_inferior": figures.non_inferior,
        "positions": {"A": 3, "B": 1, "tie": 2},
    }


def test_positions_are_counted_per_slot() -> None:
    from pytest_llmjudge.gating.pairwise_stats import position_counts

    assert position_counts(["A", "B", "tie", "A", None, "A"]) == (3, 1, 1)


def test_each_benchmarks_settings_reach_its_figures() -> None:
    from pytest_llmjudge.gating.pairwise_stats import pairwise_figures

    outcomes = {"A": ["win"] * 12 + ["loss"] * 8}
    default = pairwise_figures(outcomes, {"B": 2}, positions={"A": (5, 4, 1)})
    assert [(f.benchmark, f.positions, f.unpaired, f.n) for f in default] == [
        ("A", (5, 4, 1), 0, 20),
        ("B", (0, 0, 0), 2, 0),
    ]
    wide = pairwise_figures(outcomes, margin=0.3)
    assert wide[0].non_inferior and not default[0].non_inferior  # 0.6 won, low end above 0.2 only
    assert pairwise_figures(outcomes, power=0.99)[0].mde > default[0].mde
    assert pairwise_figures(outcomes, alpha=0.5)[0].mde < default[0].mde
