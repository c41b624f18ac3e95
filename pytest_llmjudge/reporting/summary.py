"""The terminal summary as data: gate tables and the judge line, each a list of lines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..gating.costs import CostTotal, cost_of
from ..gating.gates import BenchmarkGate, RubricGate, why
from ..gating.records import CaseRecord
from ..judging.pricing import format_usd


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *[line(r) for r in rows]]


def _failed(g: BenchmarkGate) -> str:
    return f"{g.failed} ({g.review} uncertain)" if g.review else str(g.failed)


def _interval(g: BenchmarkGate) -> str:
    return "-" if g.ci_low is None or g.ci_high is None else f"{g.ci_low:.1%}–{g.ci_high:.1%}"


def _kind(g: BenchmarkGate) -> str:
    if g.gate_rule == "pairwise":  # judged against a baseline: the threshold decides nothing
        return "pairwise"
    return "hard" if g.criticality == "hard_gate" else "threshold"


def benchmark_table(gates: Sequence[BenchmarkGate], costs: Mapping[str, str] | None = None) -> list[str]:
    """One row per benchmark. ``failed`` counts uncertain verdicts too (they fail and are listed
    for human review); pass rate and threshold are both percentages; the pass rate and its 95%
    interval both count case verdicts (repeated samples reduced per case); ``detail`` says why;
    with ``costs`` (by benchmark code) a cost column."""
    rows = [
        [
            g.code,
            str(g.cases),
            str(g.passed),
            _failed(g),
            str(g.errors),
            _pct(g.pass_rate),
            _interval(g),
            "-" if g.threshold is None or g.gate_rule == "pairwise" else _pct(g.threshold),
            _kind(g),
            g.status.upper() if g.status in {"pass", "fail"} else g.status,
            why(g),
        ]
        for g in gates
    ]
    header = ["benchmark", "cases", "passed", "failed", "errors", "pass rate", "95% interval", "threshold"]
    header += ["kind", "gate", "detail"]
    if costs is not None:
        at = header.index("kind")
        header.insert(at, "cost")
        for gate, row in zip(gates, rows, strict=True):
            row.insert(at, costs.get(gate.code, "-"))
    return _table(header, rows)


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


@dataclass(frozen=True)
class GateSummary:
    """The ``llmjudge gates`` section of the terminal summary, as data (see ``lines``)."""

    benchmarks: Sequence[BenchmarkGate]
    rubrics: Sequence[RubricGate] = ()
    judge_line: str = ""
    review_file: str = ""
    review: Sequence[CaseRecord] = ()
    exit_status: int | None = None
    reasons: Sequence[str] = ()
    costs: Mapping[str, str] | None = None  # the cost column, by benchmark code

    @property
    def lines(self) -> list[str]:
        lines = benchmark_table(self.benchmarks, self.costs)
        if self.rubrics:
            lines += ["", *rubric_table(self.rubrics)]
        if self.judge_line:
            lines += ["", self.judge_line]
        if self.review:
            lines.append(f"needs human review ({len(self.review)}, listed in {self.review_file}):")
            lines += [f"  {r.benchmark}::{r.case} at {r.location}: {shorten(r.reason)}" for r in self.review]
        if self.exit_status is not None:
            lines += exit_lines(self.exit_status, self.reasons)
        return lines


def exit_lines(status: int, reasons: Sequence[str]) -> list[str]:
    """``exit status N`` and why, one reason a line."""
    if not reasons:
        return [f"exit status {status}"]
    if len(reasons) == 1:
        return [f"exit status {status}: {reasons[0]}"]
    return [f"exit status {status}:", *[f"  - {r}" for r in reasons]]


def closing_exit_line(status: int, reasons: Sequence[str]) -> str:
    """The exit decision as one line (``llmjudge: exit status 0: reason; reason``), for the end of
    a run that exits 0 although items failed: below pytest's red count of them, it is read last."""
    return "llmjudge: " + exit_lines(status, ["; ".join(reasons)] if reasons else [])[0]


LIMIT = 300


def shorten(text: str, limit: int = LIMIT) -> str:
    """``text`` cut to ``limit`` characters with "…" (the terminal; JUnit and files keep it all)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class Stats:
    """Judge counts of a run, derived from its case records only."""

    calls: int = 0
    cache_hits: int = 0
    retries: Counter[str] = field(default_factory=Counter)  # retried attempts by failure kind
    input_tokens: int = 0
    output_tokens: int = 0
    judged: int = 0
    errors: int = 0
    cache_write_errors: list[str] = field(default_factory=list)
    cost: CostTotal | None = None  # of the run's judge and task calls

    def line(self) -> str:
        """The summary's judge line: verdicts, model calls, cache hits, retries, errors, tokens."""
        text = (
            f"judge: {self.judged} verdict(s), {self.calls} model call(s), {self.cache_hits} cache hit(s), "
            f"{self._retries()}, {self.errors} error(s)"
        )
        if self.input_tokens or self.output_tokens:
            text += f", tokens in/out {self.input_tokens}/{self.output_tokens}"
        elif self.calls:
            text += ", tokens not reported"
        if self.cost is not None:
            text += f", cost {self.cost.text()}"
            if self.cost.saved:
                text += f" (the cache saved {format_usd(self.cost.saved)})"
        if self.cache_write_errors:
            text += f"; {len(self.cache_write_errors)} cache write(s) failed: {self.cache_write_errors[0]}"
        return text

    def _retries(self) -> str:
        """``4 retries (3 timeout, 1 http-503)``: how many, and what they were for."""
        total = sum(self.retries.values())
        text = f"{total} retr{'y' if total == 1 else 'ies'}"
        if not total:
            return text
        causes = sorted(self.retries.items(), key=lambda kind_count: (-kind_count[1], kind_count[0]))
        if len(causes) == 1:
            return f"{text} ({causes[0][0]})"
        return f"{text} ({', '.join(f'{count} {kind}' for kind, count in causes)})"

    @classmethod
    def from_records(cls, records: Iterable[CaseRecord], cache_write_errors: Sequence[str] = ()) -> Stats:
        """Counts of the cases a judge decided: verdicts (pass/fail), errors, calls, cache hits."""
        stats = cls(cache_write_errors=list(cache_write_errors))
        records = list(records)
        for r in records:
            if r.result not in {"pass", "fail", "error"} or r.model == "checks":
                continue
            if r.result == "error":
                stats.errors += 1
            else:
                stats.judged += 1
            stats.cache_hits += r.cached
            # each attempt is one request; the last (the verdict's) reports its own, if any
            stats.calls += max(r.attempts - 1, 0) + max(r.requests, 1 if r.attempts else 0)
            stats.retries.update(r.retried)
            stats.input_tokens += r.input_tokens
            stats.output_tokens += r.output_tokens
        stats.cost = cost_of(records)
        return stats

    def cost_notes(self) -> list[str]:
        """Why part of the cost is unknown: once per model without a price."""
        return self.cost.notes() if self.cost is not None else []
