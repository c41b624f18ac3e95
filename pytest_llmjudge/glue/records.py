"""Per-case records attached to pytest reports (they travel to the xdist controller) and JUnit."""

from __future__ import annotations

import pytest

from ..gating.records import CaseRecord
from ..judging.verdict import Verdict


def case_record(item: pytest.Item, report: pytest.TestReport) -> CaseRecord | None:
    from .nodes import CaseItem, PromptItem

    if isinstance(item, PromptItem) and not item.benchmark.cases and report.when == "call":
        b = item.benchmark
        return CaseRecord(
            b.code,
            "",
            "skip",
            item.nodeid,
            b.spec.label or "",
            b.spec.threshold,
            b.spec.criticality,
            b.spec.weight,
            b.spec.parent_rubric,
        )
    if not isinstance(item, CaseItem):
        return None
    if report.when == "setup" and report.passed:
        return None
    if report.when == "teardown":
        return None
    b = item.benchmark
    outcome = item.outcome
    verdict: Verdict | None = outcome.verdict if outcome else None
    if report.skipped:
        result = "skip"
    elif report.when == "setup":
        result = "error"
    else:
        result = "pass" if report.passed else "fail"
    usage = outcome.usage if outcome else None
    return CaseRecord(
        benchmark=b.code,
        case=item.case.id,
        nodeid=item.nodeid,
        result=result,
        label=b.spec.label or "",
        threshold=b.spec.threshold,
        criticality=b.spec.criticality,
        weight=b.spec.weight,
        parent_rubric=b.spec.parent_rubric,
        location=f"{item.case.location.path}:{item.case.location.line}",
        uncertain=bool(verdict and verdict.uncertain),
        reason=(verdict.reason if verdict else str(outcome.failure) if outcome and outcome.failure else ""),
        score=verdict.score if verdict else None,
        model=outcome.model if outcome else "",
        prompt_hash=item.request.digest,
        cached=bool(outcome and outcome.cached),
        attempts=outcome.attempts if outcome else 0,
        requests=usage.requests if usage else 0,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
    )
