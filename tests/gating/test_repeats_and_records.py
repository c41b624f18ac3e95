"""Repeated judge samples reduced to one case verdict, and the case records that carry them from
an xdist worker to the results file."""

from __future__ import annotations

from dataclasses import asdict, replace

import pytest

from pytest_llmjudge.gating.records import (
    CaseRecord,
    JudgeFacts,
    JudgeFingerprint,
    PairAnswerRecord,
    PairwiseRecord,
    ProducedOutput,
    RequestText,
    SampleRecord,
)
from pytest_llmjudge.gating.repeats import Reduction, Sample, combine_outcomes, reduce_samples
from pytest_llmjudge.judging.verdict import JudgeFailure, Outcome, Usage, Verdict
from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Benchmark, BenchmarkSpec, JudgeSettings
from pytest_llmjudge.suite.settings import RunSettings

P, F = Sample(True), Sample(False)

REDUCTIONS = {
    "majority of 3": ([P, P, F], "majority", Reduction(True, True, 2 / 3, 2, 3)),
    "a majority tie fails": ([P, F], "majority", Reduction(False, True, 1 / 2, 1, 2)),
    "majority of one": ([F], "majority", Reduction(False, False, 1.0, 0, 1)),
    "all of them": ([P, P, P], "all", Reduction(True, False, 1.0, 3, 3)),
    "all but one": ([P, P, F, P], "all", Reduction(False, True, 1 / 4, 3, 4)),
    "any one": ([F, F, P], "any", Reduction(True, True, 1 / 3, 1, 3)),
    "none": ([F, F], "any", Reduction(False, False, 1.0, 0, 2)),
    "mean score at 0.5 passes": (
        [Sample(False, 0.2), Sample(False, 0.8)],
        "mean",
        Reduction(True, False, 0.0, 0, 2),
    ),
    "mean score under 0.5 fails": (
        [Sample(True, 0.4), Sample(True, 0.59)],
        "mean",
        Reduction(False, False, 0.0, 2, 2),
    ),
    "mean of pass fractions without every score": (
        [Sample(True, 0.1), Sample(False)],
        "mean",
        Reduction(True, True, 1 / 2, 1, 2),
    ),
    "mean of pass fractions under half": ([P, F, F], "mean", Reduction(False, True, 2 / 3, 1, 3)),
}


@pytest.mark.parametrize(("samples", "rule", "expected"), REDUCTIONS.values(), ids=REDUCTIONS.keys())
def test_reduce_samples(samples: list[Sample], rule: str, expected: Reduction) -> None:
    assert reduce_samples(samples, rule) == expected


def test_majority_is_the_default_rule() -> None:
    assert reduce_samples([P, F]).passed is False


@pytest.mark.parametrize(
    ("samples", "rule", "message"),
    [([], "majority", "no samples to reduce"), ([P], "most", "unknown reduce rule 'most'")],
)
def test_reduce_refuses(samples: list[Sample], rule: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        reduce_samples(samples, rule)


def benchmark(reduce: str | None = None) -> Benchmark:
    judge = JudgeSettings(reduce=reduce) if reduce else None
    return Benchmark(BenchmarkSpec(code="B1", judge=judge), Location("b.yaml", 1, 1), (), None)


def judged(passed: bool, reason: str, **fields: object) -> Outcome:
    verdict_fields = {k: fields.pop(k) for k in ("score", "uncertain", "format") if k in fields}
    return Outcome(Verdict(passed, reason, **verdict_fields), **fields)  # type: ignore[arg-type]


def test_samples_combine_into_one_verdict() -> None:
    samples = [
        judged(
            True,
            "fine",
            model="m",
            attempts=2,
            usage=Usage(1, 10, 3),
            latency=0.5,
            retried=("http-500",),
            format="json",
        ),
        judged(False, "wrong", model="m", attempts=1, usage=Usage(2, 20, 4), latency=None),
        judged(True, "good", model="m", attempts=3, usage=Usage(1, 30, 5), latency=1.5, retried=("a", "b")),
    ]
    combined = combine_outcomes(benchmark(), samples, RunSettings(reduce="majority"))
    assert combined == Outcome(
        Verdict(True, "fine (2 of 3 samples pass, majority)", None, None, False, "json"),
        None,
        "m",
        False,
        1 + 1 + 0 + 2,  # one, plus each sample's retries
        Usage(4, 60, 12),
        2.0,
        tuple(samples),
        ("http-500", "a", "b"),
    )


def test_the_benchmarks_own_rule_and_a_score_for_every_sample() -> None:
    samples = [judged(True, "ok", score=0.9), judged(False, "no", score=0.2, uncertain=True)]
    combined = combine_outcomes(benchmark("all"), samples, RunSettings(reduce="any"))
    assert combined.verdict == Verdict(False, "no (1 of 2 samples pass, all)", 0.55, None, True, "")


def test_an_uncertain_failing_case_stays_uncertain_only_when_failing() -> None:
    samples = [judged(True, "ok"), judged(True, "ok too"), judged(True, "unsure", uncertain=True)]
    combined = combine_outcomes(benchmark(), samples, RunSettings())
    assert combined.verdict is not None and combined.verdict.passed and not combined.verdict.uncertain
    assert combined.verdict.score is None  # not every sample scored


def test_cached_samples_take_no_attempt() -> None:
    samples = [judged(True, "a", cached=True, attempts=0), judged(True, "b", cached=True, attempts=0)]
    combined = combine_outcomes(benchmark(), samples, RunSettings())
    assert (combined.cached, combined.attempts, combined.latency) == (True, 0, None)
    mixed = combine_outcomes(benchmark(), [samples[0], judged(True, "c", attempts=1)], RunSettings())
    assert (mixed.cached, mixed.attempts) == (False, 1)


def test_an_errored_sample_errors_the_case() -> None:
    failure = JudgeFailure("http-500", "server said no")
    samples = [judged(True, "fine", model="m1"), Outcome(None, failure, "m2", attempts=4)]
    combined = combine_outcomes(benchmark(), samples, RunSettings())
    assert (combined.verdict, combined.failure, combined.model, combined.attempts) == (None, failure, "m2", 4)
    assert combined.samples == tuple(samples)


FULL = CaseRecord(
    "B1",
    "c1",
    "fail",
    nodeid="B1::c1",
    label="Billing",
    threshold=0.8,
    criticality="hard_gate",
    weight=2.0,
    parent_rubric="R1",
    location="b.yaml:7",
    uncertain=True,
    reason="wrong",
    score=0.25,
    model="openai:judge",
    prompt_hash="h",
    cached=True,
    attempts=3,
    benchmark_cases=9,
    retried=("http-500", "timeout"),
    requests=2,
    input_tokens=100,
    output_tokens=20,
    calibration=True,
    judge_pass=False,
    min_tpr=0.9,
    min_tnr=0.8,
    min_labels=10,
    case_label="pass",
    flaky=True,
    stability=2 / 3,
    samples=(
        SampleRecord(0, True, "ok", 0.5, False, True, 1, 2, 0.25, None),
        SampleRecord(1, None, "", None, True, False, 3, 4, None, "http-500: no"),
    ),
    judge=JudgeFacts(
        "llm_judge", 3, "all", "lower_bound", 0.2, JudgeFingerprint("m", {"t": 0}, "d", "f"), "instr", "rub"
    ),
    request=RequestText("in", "out", "exp"),
    produced=ProducedOutput("task", {"text": "out"}, "t.py:f", "fp", 0.5, 7, 8),
)


def test_a_record_survives_the_trip_from_an_xdist_worker() -> None:
    assert CaseRecord.from_dict(asdict(FULL)) == FULL
    assert CaseRecord.from_dict(asdict(CaseRecord("B1", "c", "pass"))) == CaseRecord("B1", "c", "pass")


def test_a_record_from_another_version_keeps_what_it_knows() -> None:
    data = {
        "benchmark": "B1",
        "case": "c",
        "result": "pass",
        "retried": ["a"],
        "new_field": 1,
        "judge": {"repeats": 2, "fingerprint": None, "later": True},
    }
    assert CaseRecord.from_dict(data) == CaseRecord(
        "B1", "c", "pass", retried=("a",), judge=JudgeFacts(repeats=2)
    )


def test_typed_values_pass_through() -> None:
    data = asdict(FULL) | {"judge": FULL.judge, "samples": list(FULL.samples)}
    assert CaseRecord.from_dict(data) == FULL


def test_a_sample_in_the_results_file() -> None:
    assert FULL.samples[1].to_results() == {
        "index": 1,
        "pass": None,
        "reason": "",
        "score": None,
        "uncertain": True,
        "cached": False,
        "input_tokens": 3,
        "output_tokens": 4,
        "latency_s": None,
        "error": "http-500: no",
        "cached_input_tokens": 0,
        "cost_usd": 0.0,
        "saved_usd": None,
        "answered_by": None,
        "model_latency_s": None,
    }
    assert FULL.samples[0].to_results() == {
        "index": 0,
        "pass": True,
        "reason": "ok",
        "score": 0.5,
        "uncertain": False,
        "cached": True,
        "input_tokens": 1,
        "output_tokens": 2,
        "latency_s": 0.25,
        "error": None,
        "cached_input_tokens": 0,
        "cost_usd": 0.0,
        "saved_usd": None,
        "answered_by": None,
        "model_latency_s": None,
    }


ANSWER = PairAnswerRecord(
    "candidate_first", "A", "A", "A is better", "d1", ("A", None, "A"), True, 2, 30, 5, 0.75, "http-500", 0.01
)
PAIR = PairwiseRecord(
    "win",
    identical=False,
    consistent=True,
    unpaired=False,
    baseline_output={"text": "old"},
    baseline_source="baseline results",
    answers=(ANSWER, replace(ANSWER, order="baseline_first", candidate_position="B", winner="B")),
    baseline_only=("gone",),
    gate="non_inferior",
    min_consistency=0.8,
)


def test_a_pairwise_record_survives_the_trip_from_an_xdist_worker() -> None:
    record = replace(FULL, pairwise=PAIR)
    assert CaseRecord.from_dict(asdict(record)) == record


def test_a_pairwise_case_in_the_results_file() -> None:
    answer = {
        "order": "candidate_first",
        "candidate_position": "A",
        "winner": "A",
        "reason": "A is better",
        "request_digest": "d1",
        "sample_winners": ["A", None, "A"],
        "cached": True,
        "calls": 2,
        "input_tokens": 30,
        "output_tokens": 5,
        "latency_s": 0.75,
        "error": "http-500",
        "cost_usd": 0.01,
    }
    assert ANSWER.to_results() == answer
    results = PAIR.to_results()
    assert results == {
        "outcome": "win",
        "identical": False,
        "consistent": True,
        "unpaired": False,
        "baseline_output": {"text": "old"},
        "baseline_source": "baseline results",
        "answers": [answer, {**answer, "order": "baseline_first", "candidate_position": "B", "winner": "B"}],
    }
