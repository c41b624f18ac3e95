"""Per-case records attached to pytest reports (they travel to the xdist controller) and JUnit."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import pytest

from ..gating.records import CaseRecord, JudgeFacts, JudgeFingerprint, ProducedOutput, RequestText
from ..gating.repeats import Sample, reduce_samples
from ..judging.verdict import Verdict
from ..models.judges import JudgeChoice
from ..reporting.results_writer import sample_records
from ..suite.hashing import digest
from ..suite.settings import judge_setting
from .panel_fields import panel_field
from .stash import run_host

if TYPE_CHECKING:
    from ..judging.verdict import Outcome
    from ..suite.settings import RunSettings
    from .nodes import CaseItem


def case_record(item: pytest.Item, report: pytest.TestReport) -> CaseRecord | None:
    from .nodes import CaseItem, PromptItem

    if isinstance(item, PromptItem) and not item.benchmark.cases and report.when == "call":
        b = item.benchmark
        spec = b.spec
        return CaseRecord(
            b.code,
            "",
            "skip",
            item.nodeid,
            spec.label or "",
            spec.threshold,
            spec.criticality,
            spec.weight,
            spec.parent_rubric,
        )
    if not isinstance(item, CaseItem) or report.when == "teardown":
        return None
    if report.when == "setup" and report.passed:
        return None
    b = item.benchmark
    outcome = item.outcome
    verdict: Verdict | None = outcome.verdict if outcome else None
    repeated = repeat_fields(item, outcome)
    produced = produced_field(item)
    return CaseRecord(
        benchmark=b.code,
        case=item.case.id,
        nodeid=item.nodeid,
        result=_result(report),
        label=b.spec.label or "",
        threshold=b.spec.threshold,
        criticality=b.spec.criticality,
        weight=b.spec.weight,
        parent_rubric=b.spec.parent_rubric,
        location=f"{item.case.location.path}:{item.case.location.line}",
        prompt_hash=item.request.digest,
        benchmark_cases=len(b.cases),
        produced=produced,
        panel=panel_field(item, outcome),
        **_outcome_fields(outcome, verdict),
        **repeated,
        **calibration_fields(item, verdict),
        **cost_fields(outcome, repeated["samples"], produced),
    )


def _result(report: pytest.TestReport) -> str:
    """A case item's result as its record says it: a failed setup is an error."""
    if report.skipped:
        return "skip"
    if report.when == "setup":
        return "error"
    return "pass" if report.passed else "fail"


def _outcome_fields(outcome: Outcome | None, verdict: Verdict | None) -> dict[str, Any]:
    """What a case record takes from its judging: the verdict, the model, attempts and usage."""
    usage = outcome.usage if outcome else None
    return {
        "uncertain": bool(verdict and verdict.uncertain),
        "reason": verdict.reason if verdict else str(outcome.failure) if outcome and outcome.failure else "",
        "score": verdict.score if verdict else None,
        "model": outcome.model if outcome else "",
        "cached": bool(outcome and outcome.cached),
        "attempts": outcome.attempts if outcome else 0,
        "retried": outcome.retried if outcome else (),
        "requests": usage.requests if usage else 0,
        "input_tokens": usage.input_tokens if usage else 0,
        "output_tokens": usage.output_tokens if usage else 0,
    }


def cost_fields(outcome: Outcome | None, samples: Any, produced: ProducedOutput | None) -> dict[str, Any]:
    """A case record's cost: its samples' and its task's in this run, what the cache saved,
    whether the run's budget stopped it before its call, and its calls whose usage was not
    reported (estimated) or implausible."""
    from ..cost.spending import BUDGET_KINDS
    from ..gating.costs import case_cost

    cost, saved = case_cost(samples, produced)
    failures = [s.failure for s in ((outcome.samples or (outcome,)) if outcome else ()) if s.failure]
    usage = outcome.usage if outcome else None
    return {
        "cost_usd": cost,
        "saved_usd": saved,
        "budget_stopped": any(f.kind in BUDGET_KINDS for f in failures),
        "usage_estimated": usage.estimated if usage else 0,
        "usage_implausible": usage.implausible if usage else 0,
    }


def produced_field(item: CaseItem) -> ProducedOutput | None:
    """The output the case was judged on and where it came from (results ``produced``)."""
    produced = item.produced
    if produced is not None:
        return ProducedOutput(
            produced.source,
            produced.output,
            produced.task or None,
            produced.fingerprint or None,
            produced.latency,
            produced.input_tokens,
            produced.output_tokens,
            produced.cached_input_tokens,
            None if produced.cost is None else float(produced.cost),
            None if produced.saved is None else float(produced.saved),
            None if produced.answered is None else produced.answered.to_json(),
        )
    output = item.case.spec.candidate_output
    return None if output is None else ProducedOutput("case file", output)  # None: its task gave none


@functools.lru_cache(maxsize=256)
def _instructions_digest(instructions: str, rubric: str, style: str) -> str:
    """The judge fingerprint's digest of what the judge is told (one per benchmark, not per case)."""
    return digest([instructions, rubric, style])


def repeat_fields(item: CaseItem, outcome: Outcome | None) -> dict[str, Any]:
    """The record fields of the results file: samples, flakiness, judge fingerprint, request text."""
    b, request = item.benchmark, item.request
    settings: RunSettings = run_host(item.config).settings
    samples = sample_records(outcome)
    verdicts = [Sample(bool(s.passed), s.score) for s in samples if s.passed is not None]
    rule = str(judge_setting(b, settings, "reduce"))
    reduction = reduce_samples(verdicts, rule) if verdicts and len(verdicts) == len(samples) else None
    choice = JudgeChoice.of(b, settings)
    judge_settings = {"temperature": choice.temperature, "max_tokens": choice.max_tokens}
    instructions = _instructions_digest(request.instructions, request.rubric, request.prompt_style)
    model = outcome.model if outcome else ""
    judged = outcome is not None and outcome.model != "checks"
    return {
        "case_label": item.case.spec.label,
        "flaky": bool(reduction and reduction.flaky),
        "stability": reduction.stability if reduction else None,
        "samples": samples,
        "judge": JudgeFacts(
            b.spec.evaluator_type,
            len(samples) or 1,
            rule,
            str(judge_setting(b, settings, "gate")),
            choice.temperature,
            JudgeFingerprint(
                model,
                {k: v for k, v in judge_settings.items() if v is not None},
                instructions,
                digest([model, judge_settings, instructions]),
            )
            if judged
            else None,
            request.instructions,
            request.rubric,
        ),
        "request": RequestText(request.inputs, request.output, request.expected_output or ""),
    }


def calibration_fields(item: CaseItem, verdict: Verdict | None) -> dict[str, Any]:
    """The calibration fields of a case record: calibration case, judge verdict, trust minimums."""
    from .nodes import CalibrationItem
    from .stash import run_host

    settings: RunSettings = run_host(item.config).settings
    own = item.benchmark.spec.judge

    def minimum(name: str) -> Any:
        value = getattr(own, name, None) if own is not None else None
        return value if value is not None else getattr(settings, name)

    return {
        "calibration": isinstance(item, CalibrationItem),
        "judge_pass": None if verdict is None else verdict.effective_pass,
        "min_tpr": minimum("min_tpr"),
        "min_tnr": minimum("min_tnr"),
        "min_labels": minimum("min_labels"),
    }


def failure_travels(report: pytest.TestReport) -> None:
    """A case's failure goes to the xdist controller whole: pytest sends other reports' text as
    one string, losing the terminal's short text and the one-line message (``failure_arrived``)."""
    from dataclasses import asdict

    from ..reporting.failures import FailureReport

    if isinstance(report.longrepr, FailureReport):
        report.llmjudge_failure = asdict(report.longrepr)


def failure_arrived(report: pytest.TestReport) -> None:
    """In the xdist controller: the case's failure as the worker showed it."""
    from ..reporting.failures import FailureReport

    data = getattr(report, "llmjudge_failure", None)
    if isinstance(data, dict) and not isinstance(report.longrepr, FailureReport):
        report.longrepr = FailureReport(**data)  # type: ignore[assignment]  # a TerminalRepr alike
