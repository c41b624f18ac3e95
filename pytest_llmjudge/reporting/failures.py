"""Failure reports of case items: who, where, the output judged and the expected output, verdict,
reason, rubric excerpt. No pytest here."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..gating.repeats import MEAN_SCORE_PASS
from ..judging.verdict import Outcome
from .summary import shorten

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from ..gating.records import CaseRecord
    from ..suite.files import Benchmark, Case


class CaseFailed(Exception):
    """The judge's verdict on a case is FAIL (or uncertain)."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__("judge verdict: fail")
        self.outcome = outcome


class JudgeErrored(Exception):
    """The judge gave no verdict: the case is an ERROR, not a FAIL."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(str(outcome.failure))
        self.outcome = outcome


def failure_text(
    benchmark: Benchmark,
    case: Case,
    request: CompiledRequest,
    outcome: Outcome,
    rubric_excerpt: Sequence[str],
) -> str:
    """The report for a failing or erroring case: who, where, verdict, reason, rubric excerpt."""
    title = f"{benchmark.code} · {benchmark.spec.label}" if benchmark.spec.label else benchmark.code
    lines = [title, f"case {case.id} at {case.location.path}:{case.location.line}"]
    model = f"model: {outcome.model or '?'}   prompt: {request.digest[:12]}"
    if outcome.failure is not None:
        tries = (
            f" after {outcome.attempts} attempt{'s' if outcome.attempts != 1 else ''}"
            if outcome.attempts
            else ""
        )
        phase = error_phase(outcome.failure.kind)
        lines += [f"{phase} ERROR ({outcome.failure.kind}){tries}: {outcome.failure.message}", model]
        return "\n".join(lines)
    verdict = outcome.verdict
    assert verdict is not None
    head = "verdict: FAIL"
    if verdict.uncertain:
        head += " (uncertain: listed for human review)"
    extras = [
        f"score: {verdict.score:g}{'' if verdict.uncertain else score_conflict(False, verdict.score)}"
        if verdict.score is not None
        else "",
        f"confidence: {verdict.confidence}" if verdict.confidence else "",
    ]
    if verdict.format:
        extras.append(f"read from {verdict.format} text")
    lines += judged_texts(case)
    lines += ["   ".join([head, *[e for e in extras if e]]), f"reason: {verdict.reason}", model]
    if outcome.cached:
        lines[-1] += "   (cached verdict)"
    if rubric_excerpt:
        lines += ["rubric:", *[f"  {line}" for line in rubric_excerpt]]
    return "\n".join(lines)


EXCERPT_LINES = 8
EXCERPT_CHARS = 400
# Control characters other than line breaks and tabs (terminal escapes in a model's output) are
# shown as their escapes, never sent to the terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def judged_texts(case: Case) -> list[str]:
    """The output the judge saw and the expected output, each cut to a short excerpt."""
    spec = case.spec
    lines = [] if spec.candidate_output is None else excerpt("output judged", spec.candidate_output)
    if spec.ground_truth is not None:
        lines += excerpt("expected output", spec.ground_truth)
    return lines


def excerpt(title: str, value: object) -> list[str]:
    """``title:`` and the first lines of ``value`` (JSON shown indented), indented; a cut text
    ends with a note of how much is shown."""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text.strip("\n"))
    shown = "\n".join(text.splitlines()[:EXCERPT_LINES])[:EXCERPT_CHARS]
    lines = [f"{title}:", *[f"  {line}" for line in shown.splitlines()]]
    if len(shown) < len(text):
        lines.append(
            f"  … cut: {len(shown):,} of {len(text):,} characters shown "
            "(the whole text: the results file and the HTML report)"
        )
    return lines


@dataclass(frozen=True)
class Crash:
    message: str


@dataclass(frozen=True)
class FailureReport:
    """A failing or erroring case as pytest shows it: the full text in JUnit (``str``), the text
    with long reasons cut in the terminal (``toterminal``), and the verdict reason as the one-line
    message of the short summary and of JUnit's ``message`` attribute (``reprcrash``)."""

    text: str
    short_text: str
    message: str

    @property
    def reprcrash(self) -> Crash:
        return Crash(self.message)

    def toterminal(self, tw: Any) -> None:
        for line in self.short_text.splitlines():
            tw.line(line)

    def __str__(self) -> str:
        return self.text


def failure_report(
    benchmark: Benchmark,
    case: Case,
    request: CompiledRequest,
    outcome: Outcome,
    rubric_excerpt: Sequence[str],
) -> FailureReport:
    text = failure_text(benchmark, case, request, outcome, rubric_excerpt)
    if outcome.failure is not None:
        kind = outcome.failure.kind
        message = f"{error_phase(kind)} ERROR ({kind}): {outcome.failure.message}"
    else:
        verdict = outcome.verdict
        assert verdict is not None
        head = "uncertain, needs review" if verdict.uncertain else "FAIL"
        message = f"{head}: {verdict.reason}"
    short_text = "\n".join(
        shorten(line) if line.startswith(("reason: ", "judge ERROR")) else line for line in text.splitlines()
    )
    return FailureReport(text, short_text, shorten(message))


def score_conflict(passed: bool, score: float | None) -> str:
    """`` (contradicts the verdict …)`` when a verdict and its score disagree: a FAIL scored at
    0.5 or more, or a PASS below it, as ``reduce: mean`` reads scores; else empty."""
    if score is None or passed == (score >= MEAN_SCORE_PASS):
        return ""
    side = "passing" if score >= MEAN_SCORE_PASS else "failing"
    return (
        f" (contradicts the verdict: a {side} score, as reduce: mean reads scores from 0 to 1; "
        "the verdict decides)"
    )


def score_conflicts(records: Sequence[CaseRecord]) -> list[str]:
    """The summary's line on verdicts that contradict their scores, if any."""
    found = [
        r
        for r in records
        if r.result in ("pass", "fail") and not r.uncertain and score_conflict(r.result == "pass", r.score)
    ]
    if not found:
        return []
    cases = ", ".join(f"{r.benchmark}::{r.case} ({r.result.upper()}, score {r.score:g})" for r in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return [
        f"{len(found)} verdict(s) contradict their score, the verdict decided: {cases}{more} "
        f"(a score of {MEAN_SCORE_PASS:g} or more passes under reduce: mean)"
    ]


def error_phase(kind: str) -> str:
    """Which step of a case failed: its ``task`` (producing the output) or its ``judge``."""
    return "task" if kind.startswith("task-") else "judge"
