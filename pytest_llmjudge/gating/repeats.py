"""Repeated judge samples of one case: the case's verdict, whether it is flaky, its stability.

Pure: samples are plain values, so the judging service and the results file share the rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..judging.verdict import Outcome
    from ..suite.files import Benchmark
    from ..suite.settings import RunSettings

MEAN_SCORE_PASS = 0.5


@dataclass(frozen=True)
class Sample:
    """One judge answer for a case: ``passed`` is its effective verdict (uncertain fails)."""

    passed: bool
    score: float | None = None


@dataclass(frozen=True)
class Reduction:
    passed: bool
    flaky: bool  # the samples disagree
    stability: float  # share of samples agreeing with the case's verdict
    passes: int
    samples: int


def reduce_samples(samples: Sequence[Sample], rule: str = "majority") -> Reduction:
    """The case verdict of ``samples`` under ``rule``.

    ``majority``: more than half pass (a tie fails); ``all``: every sample passes; ``any``: one
    does; ``mean``: the mean score reaches 0.5 when every sample has a score, else the pass
    fraction does.
    """
    if not samples:
        raise ValueError("no samples to reduce")
    passes = sum(1 for s in samples if s.passed)
    n = len(samples)
    if rule == "majority":
        passed = 2 * passes > n
    elif rule == "all":
        passed = passes == n
    elif rule == "any":
        passed = passes > 0
    elif rule == "mean":
        scores = [s.score for s in samples]
        if all(score is not None for score in scores):
            passed = sum(score for score in scores if score is not None) / n >= MEAN_SCORE_PASS
        else:
            passed = passes / n >= MEAN_SCORE_PASS
    else:
        raise ValueError(f"unknown reduce rule {rule!r}")
    agreeing = passes if passed else n - passes
    return Reduction(passed, 0 < passes < n, agreeing / n, passes, n)


def combine_outcomes(benchmark: Benchmark, samples: list[Outcome], settings: RunSettings) -> Outcome:
    """One case's outcome from its samples: the reduced verdict, ``samples`` kept for reports.

    A sample that errored errors the case (an error is never a pass or a fail); the reason is the
    first sample agreeing with the case's verdict, with the sample count.
    """
    from ..judging.verdict import Outcome, Verdict, total_usage
    from ..suite.settings import judge_setting

    usage = total_usage(s.usage for s in samples)  # tokens and cost of every sample
    latencies = [s.latency for s in samples if s.latency is not None]
    failed = next((s for s in samples if s.verdict is None), None)
    first = failed or samples[0]
    combined = Outcome(
        None,
        first.failure,
        first.model,
        all(s.cached for s in samples),
        _attempts(samples),
        usage,
        sum(latencies) if latencies else None,
        tuple(samples),
        tuple(kind for s in samples for kind in s.retried),
    )
    if failed is not None:
        return combined
    verdicts = [s.verdict for s in samples if s.verdict is not None]
    rule = str(judge_setting(benchmark, settings, "reduce"))
    result = reduce_samples([Sample(v.effective_pass, v.score) for v in verdicts], rule)
    agreeing = next((v for v in verdicts if v.effective_pass == result.passed), verdicts[0])
    scores = [v.score for v in verdicts if v.score is not None]
    verdict = Verdict(
        passed=result.passed,
        reason=f"{agreeing.reason} ({result.passes} of {result.samples} samples pass, {rule})",
        score=sum(scores) / len(scores) if len(scores) == len(verdicts) else None,
        uncertain=not result.passed and any(v.uncertain for v in verdicts),
        format=agreeing.format,
    )
    return replace(combined, verdict=verdict)


def _attempts(samples: Sequence[Outcome]) -> int:
    """Attempts of a case judged in samples: one, plus every sample's retries (0 if all cached)."""
    if not any(s.attempts for s in samples):
        return 0
    return 1 + sum(max(s.attempts - 1, 0) for s in samples)
