"""What people read: failure reports, summary tables and the review file. No pytest here."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..gating.gates import BenchmarkGate, CaseRecord, RubricGate
from ..judging.verdict import Outcome

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
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
        lines += [f"judge ERROR ({outcome.failure.kind}){tries}: {outcome.failure.message}", model]
        return "\n".join(lines)
    verdict = outcome.verdict
    assert verdict is not None
    head = "verdict: FAIL"
    if verdict.uncertain:
        head += " (uncertain: listed for human review)"
    extras = [
        f"score: {verdict.score:g}" if verdict.score is not None else "",
        f"confidence: {verdict.confidence}" if verdict.confidence else "",
    ]
    if verdict.format:
        extras.append(f"read from {verdict.format} text")
    lines += ["   ".join([head, *[e for e in extras if e]]), f"reason: {verdict.reason}", model]
    if outcome.cached:
        lines[-1] += "   (cached verdict)"
    if rubric_excerpt:
        lines += ["rubric:", *[f"  {line}" for line in rubric_excerpt]]
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *[line(r) for r in rows]]


def benchmark_table(gates: Sequence[BenchmarkGate]) -> list[str]:
    rows = [
        [
            g.code,
            str(g.cases),
            str(g.passed),
            str(g.failed),
            str(g.errors),
            str(g.review),
            _pct(g.pass_rate),
            "-" if g.threshold is None else f"{g.threshold:g}",
            g.status.upper() if g.status in {"pass", "fail"} else g.status,
            "hard" if g.criticality == "hard_gate" else "",
        ]
        for g in gates
    ]
    return _table(
        ["benchmark", "cases", "passed", "failed", "errors", "review", "pass rate", "threshold", "gate", ""],
        rows,
    )


def rubric_table(gates: Sequence[RubricGate]) -> list[str]:
    rows = [
        [
            g.code,
            g.method,
            "-" if g.score is None else f"{g.score:.3f}",
            "-" if g.threshold is None else f"{g.threshold:g}",
            g.status.upper() if g.status in {"pass", "fail"} else g.status,
            g.detail,
        ]
        for g in gates
    ]
    return _table(["rubric", "aggregation", "score", "threshold", "gate", "detail"], rows)


def write_review_file(path: Path, records: Sequence[CaseRecord]) -> list[CaseRecord]:
    """Write the cases needing human review (uncertain verdicts) as JSON; returns them."""
    review = [r for r in records if r.uncertain]
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"cases": [asdict(r) for r in review]}
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return review


@dataclass
class Stats:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    judged: int = 0
    errors: int = 0
    cache_write_errors: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The summary's judge line: verdicts, model calls, cache hits, retries, errors, tokens."""
        text = (
            f"judge: {self.judged} verdict(s), {self.calls} model call(s), {self.cache_hits} cache hit(s), "
            f"{self.retries} retr{'y' if self.retries == 1 else 'ies'}, {self.errors} error(s)"
        )
        if self.input_tokens or self.output_tokens:
            text += f", tokens in/out {self.input_tokens}/{self.output_tokens}"
        elif self.calls:
            text += ", tokens not reported"
        if self.cache_write_errors:
            text += f"; {len(self.cache_write_errors)} cache write(s) failed: {self.cache_write_errors[0]}"
        return text
