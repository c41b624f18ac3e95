"""A case's samples reduced to its verdict under each ``reduce`` rule, without a run; and why a
calibration gives no corrected pass rate."""

from __future__ import annotations

from pytest_llmjudge.gating.calibration import Confusion, agreement, why_no_correction
from pytest_llmjudge.gating.repeats import combine_outcomes
from pytest_llmjudge.judging.verdict import Outcome, Verdict
from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Benchmark, BenchmarkSpec, JudgeSettings
from pytest_llmjudge.suite.settings import RunSettings


def benchmark(reduce: str) -> Benchmark:
    return Benchmark(
        BenchmarkSpec(code="B1", judge=JudgeSettings(reduce=reduce)), Location("b.yaml", 1, 1), (), None
    )


def sample(passed: bool, reason: str, score: float | None = None, model: str = "m") -> Outcome:
    return Outcome(Verdict(passed, reason, score=score), model=model)


def test_the_benchmarks_reduce_rule_decides() -> None:
    samples = [sample(False, "no"), sample(False, "nope"), sample(True, "yes")]
    combined = combine_outcomes(benchmark("any"), samples, RunSettings())
    assert combined.verdict is not None and combined.verdict.passed
    assert combined.verdict.reason == "yes (1 of 3 samples pass, any)"


def test_mean_scores_decide_even_when_no_sample_passed() -> None:
    samples = [sample(False, "first", 0.6, "m1"), sample(False, "second", 0.8, "m2")]
    combined = combine_outcomes(benchmark("mean"), samples, RunSettings())
    assert combined.verdict is not None and combined.verdict.passed
    assert combined.verdict.reason == "first (0 of 2 samples pass, mean)"  # no sample agrees: the first
    assert combined.verdict.score == 0.7
    assert combined.model == "m1"


def test_why_a_calibration_gives_no_corrected_rate() -> None:
    def why(tp: int, fn: int, tn: int, fp: int) -> str:
        return why_no_correction(agreement(Confusion(tp, fn, tn, fp)))

    assert why(0, 0, 0, 0) == "no labels: TPR and TNR unknown"
    assert why(0, 0, 3, 1) == "no case labelled pass: TPR unknown, label passing cases too"
    assert why(3, 1, 0, 0) == "no case labelled fail: TNR unknown, label failing cases too"
    assert why(1, 1, 1, 1) == "judge no better than chance (TPR + TNR <= 1)"
