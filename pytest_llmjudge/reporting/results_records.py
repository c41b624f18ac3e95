"""Case records rebuilt from a results file: the records one run's gates were decided from, so
that the shards of a suite are gated as one run (``results_merge``). Pure."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..cost.budget import REACHED
from ..gating.panel_records import MemberRecord, PanelRecord
from ..gating.records import (
    CaseRecord,
    JudgeFacts,
    JudgeFingerprint,
    PairAnswerRecord,
    PairwiseRecord,
    ProducedOutput,
    RequestText,
    SampleRecord,
)
from .results_model import Benchmark, Case, PanelCase, ResultsFile, Sample


@dataclass(frozen=True)
class RubricOfResults:
    """A rubric as its results-file entry names it: what ``gating.gates.rubric_gates`` reads."""

    code: str
    label: str
    aggregation_method: str
    passing_threshold: float | None
    benchmarks: tuple[str, ...]


def records_of(results: ResultsFile) -> list[CaseRecord]:
    """One record per case of the file (a benchmark without cases: one with no case id)."""
    records: list[CaseRecord] = []
    for benchmark in results.benchmarks:
        judge = _judge(benchmark)
        if not benchmark.cases:
            records.append(_record(benchmark, judge, None))
        records += [_record(benchmark, judge, case) for case in benchmark.cases]
    return records


def _judge(benchmark: Benchmark) -> JudgeFacts | None:
    if benchmark.request is None and benchmark.judge is None:
        return None
    fingerprint = benchmark.judge
    temperature = fingerprint.settings.get("temperature") if fingerprint else None
    return JudgeFacts(
        evaluator_type=benchmark.evaluator_type,
        repeats=benchmark.repeats,
        reduce=benchmark.reduce,
        gate=benchmark.gate_rule,  # the rule applied: applying it again keeps it
        temperature=temperature if isinstance(temperature, int | float) else None,
        fingerprint=None if fingerprint is None else JudgeFingerprint(**fingerprint.model_dump()),
        instructions=benchmark.request.instructions if benchmark.request else "",
        rubric=benchmark.request.rubric if benchmark.request else "",
    )


def _record(benchmark: Benchmark, judge: JudgeFacts | None, case: Case | None) -> CaseRecord:
    trust = benchmark.trust
    common = CaseRecord(
        benchmark=benchmark.code,
        case="",
        result="skip",
        label=benchmark.label,
        threshold=benchmark.threshold,
        criticality=benchmark.criticality,
        weight=benchmark.weight,
        parent_rubric=benchmark.parent_rubric,
        benchmark_cases=benchmark.gate.collected or 0,
        judge=judge,
        min_tpr=trust.min_tpr if trust else None,
        min_tnr=trust.min_tnr if trust else None,
        min_labels=trust.min_labels if trust else None,
        pairwise=_pairwise(benchmark, None) if benchmark.pairwise else None,
    )
    if case is None:
        return common
    return replace(
        common,
        case=case.id,
        model=_model(benchmark),
        result=case.result,
        nodeid=case.nodeid,
        location=case.location,
        uncertain=case.uncertain,
        reason=case.reason,
        score=case.score,
        prompt_hash=case.request_digest,
        calibration=case.calibration,
        judge_pass=_judge_pass(case),
        case_label=case.label,
        flaky=case.flaky,
        stability=case.stability,
        samples=tuple(_sample(s) for s in case.samples),
        request=None if case.request is None else RequestText(**case.request.model_dump()),
        produced=None if case.produced is None else ProducedOutput(**case.produced.model_dump()),
        pairwise=_pairwise(benchmark, case) if case.pairwise else None,
        cost_usd=case.cost_usd,
        saved_usd=case.saved_usd,
        budget_stopped=case.result == "error" and REACHED in case.reason,
        panel=None if case.panel is None else _panel(case.panel),
    )


def _model(benchmark: Benchmark) -> str:
    """The model string a case's verdicts are recorded under, as the run recorded it: ``checks``
    for a code benchmark, else its judge's (a panel's members carry their own)."""
    if benchmark.evaluator_type == "code":
        return "checks"
    return benchmark.judge.model if benchmark.judge is not None else ""


def _panel(panel: PanelCase) -> PanelRecord:
    """A panel case's members as the run recorded them (their cost is in the case's)."""
    members = tuple(
        MemberRecord(
            m.model,
            m.pass_,
            m.reason,
            m.error,
            m.cached,
            m.samples,
            m.input_tokens,
            m.output_tokens,
            outcome=m.outcome,
        )
        for m in panel.members
    )
    return PanelRecord(panel.rule, panel.min_members, panel.decision, panel.split, members)


def _sample(sample: Sample) -> SampleRecord:
    return SampleRecord(
        index=sample.index,
        passed=sample.pass_,
        reason=sample.reason,
        score=sample.score,
        uncertain=sample.uncertain,
        cached=sample.cached,
        input_tokens=sample.input_tokens,
        output_tokens=sample.output_tokens,
        latency_s=sample.latency_s,
        error=sample.error,
        cached_input_tokens=sample.cached_input_tokens,
        cost_usd=sample.cost_usd,
        saved_usd=sample.saved_usd,
        answered_model=sample.answered_by.model if sample.answered_by else None,
        answered_fingerprint=sample.answered_by.fingerprint if sample.answered_by else None,
        model_latency_s=sample.model_latency_s,
    )


def _judge_pass(case: Case) -> bool | None:
    """The judge's own verdict: a calibration case's result is agreement with its label."""
    if case.result not in ("pass", "fail"):
        return None
    if case.calibration:
        return (case.label == "pass") == (case.result == "pass")
    return case.result == "pass"


def _pairwise(benchmark: Benchmark, case: Case | None) -> PairwiseRecord:
    figures = benchmark.pairwise
    own = case.pairwise if case is not None else None
    answers = tuple(
        PairAnswerRecord(**{**a.model_dump(), "sample_winners": tuple(a.sample_winners)})
        for a in (own.answers if own else ())
    )
    return PairwiseRecord(
        outcome=own.outcome if own else None,
        identical=own.identical if own else False,
        consistent=own.consistent if own else None,
        unpaired=own.unpaired if own else False,
        baseline_output=own.baseline_output if own else None,
        baseline_source=own.baseline_source if own else None,
        answers=answers,
        baseline_only=tuple(figures.unpaired_cases.baseline_only) if figures else (),
        gate=figures.gate if figures else None,
        min_consistency=figures.min_consistency if figures else None,
    )


def rubrics_of(results: ResultsFile) -> list[RubricOfResults]:
    return [
        RubricOfResults(r.code, r.label, r.aggregation, r.threshold, tuple(r.benchmarks))
        for r in results.rubrics
    ]
