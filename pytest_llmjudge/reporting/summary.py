"""The terminal summary as data: gate tables and the judge line, each a list of lines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cost.pricing import format_usd
from ..gating.costs import CostTotal, cost_of
from ..gating.gates import BenchmarkGate, RubricGate, task_errored, why
from ..gating.records import CaseRecord


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}" if value in (0.0, 1.0) else f"{value:.1%}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *[line(r) for r in rows]]


@dataclass(frozen=True)
class GateRow:
    """What a row of the benchmark table shows, from a run's gate or from its results file: the
    terminal and ``llmjudge show`` render one table."""

    code: str
    cases: int
    passed: int
    failed: int
    review: int
    errors: int
    pass_rate: float | None
    ci_low: float | None
    ci_high: float | None
    threshold: float | None
    gate_rule: str
    criticality: str
    status: str
    detail: str

    @classmethod
    def of_gate(cls, g: BenchmarkGate) -> GateRow:
        return cls(
            g.code,
            g.cases,
            g.passed,
            g.failed,
            g.review,
            g.errors,
            g.pass_rate,
            g.ci_low,
            g.ci_high,
            g.threshold,
            g.gate_rule,
            g.criticality,
            g.status,
            why(g),
        )

    @classmethod
    def of_results(cls, benchmark: Mapping[str, Any]) -> GateRow:
        """A results file's ``benchmarks[]`` entry."""
        gate = benchmark["gate"]
        return cls(
            benchmark["code"],
            gate["cases"],
            gate["passed"],
            gate["failed"],
            gate["review"],
            gate["errors"],
            gate["pass_rate"],
            gate["ci_low"],
            gate["ci_high"],
            benchmark["threshold"],
            benchmark["gate_rule"],
            benchmark["criticality"],
            gate["status"],
            gate["detail"],
        )

    def cells(self) -> list[str]:
        interval = (
            "-" if self.ci_low is None or self.ci_high is None else f"{self.ci_low:.1%}–{self.ci_high:.1%}"
        )
        pairwise = self.gate_rule == "pairwise"  # judged against a baseline: the threshold decides nothing
        kind = "pairwise" if pairwise else "hard" if self.criticality == "hard_gate" else "threshold"
        return [
            self.code,
            str(self.cases),
            str(self.passed),
            f"{self.failed} ({self.review} for review)" if self.review else str(self.failed),
            str(self.errors),
            _pct(self.pass_rate),
            interval,
            "-" if self.threshold is None or pairwise else _pct(self.threshold),
            kind,
            _status(self.status),
            self.detail,
        ]


def _status(status: str) -> str:
    return status.upper() if status in {"pass", "fail"} else status


def benchmark_table(
    gates: Sequence[BenchmarkGate | GateRow], costs: Mapping[str, str] | None = None
) -> list[str]:
    """One row per benchmark. ``failed`` counts uncertain verdicts too (they fail), and says how
    many cases are listed for human review (uncertain, or a panel split on them); pass rate and
    threshold are both percentages; the pass rate and its 95% interval both count case verdicts
    (repeated samples reduced per case); ``detail`` says why; with ``costs`` (by benchmark code)
    a cost column."""
    shown = [g if isinstance(g, GateRow) else GateRow.of_gate(g) for g in gates]
    rows = [g.cells() for g in shown]
    header = ["benchmark", "cases", "passed", "failed", "errors", "pass rate", "95% interval", "threshold"]
    header += ["kind", "gate", "detail"]
    if costs is not None:
        at = header.index("kind")
        header.insert(at, "cost")
        for gate, row in zip(shown, rows, strict=True):
            row.insert(at, costs.get(gate.code, "-"))
    return _table(header, rows)


def rubric_table(gates: Sequence[RubricGate | Mapping[str, Any]]) -> list[str]:
    """One row per rubric, from its gate or a results file's ``rubrics[]`` entry."""
    rows = []
    for g in gates:
        fields = g if isinstance(g, Mapping) else _rubric_fields(g)
        score, threshold = fields["score"], fields["threshold"]
        rows.append(
            [
                fields["code"],
                fields["aggregation"],
                "-" if score is None else f"{score:.3f}",
                "-" if threshold is None else f"{threshold:g}",
                _status(fields["status"]),
                fields["detail"],
            ]
        )
    return _table(["rubric", "aggregation", "score", "threshold", "gate", "detail"], rows)


def _rubric_fields(g: RubricGate) -> dict[str, Any]:
    names = ("code", "score", "threshold", "status", "detail")
    return {"aggregation": g.method, **{name: getattr(g, name) for name in names}}


def results_gate_lines(data: Mapping[str, Any]) -> list[str]:
    """A results file's gate tables and exit decision, as the terminal summary showed them."""
    costs = {b["code"]: _cost_text(b["cost"]) for b in data["benchmarks"] if b.get("cost")}
    lines = benchmark_table([GateRow.of_results(b) for b in data["benchmarks"]], costs or None)
    if data.get("rubrics"):
        lines += ["", *rubric_table(data["rubrics"])]
    return lines


def _cost_text(cost: Mapping[str, Any]) -> str:
    """A results-file ``cost`` as the terminal's cost column writes it (``CostTotal.text``)."""
    if cost["usd"] is not None:
        return format_usd(float(cost["usd"]))
    priced = cost["priced_usd"]
    return f"{format_usd(float(priced))} + unknown" if priced else "unknown"


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
        """Counts of the cases a judge decided: verdicts (pass/fail), errors, calls, cache hits.
        The one count of judge calls: the terminal, the results file, ``llmjudge show`` and the
        HTML report all show these numbers (code checks call no model)."""
        stats = cls(cache_write_errors=list(cache_write_errors))
        records = list(records)
        for r in records:
            if r.result not in {"pass", "fail", "error"} or r.model == "checks" or task_errored(r):
                continue
            if r.result == "error":
                stats.errors += 1
            else:
                stats.judged += 1
            stats.cache_hits += cache_hits(r)
            # each attempt is one request; the last (the verdict's) reports its own, if any
            stats.calls += max(r.attempts - 1, 0) + max(r.requests, 1 if r.attempts else 0)
            stats.retries.update(r.retried)
            stats.input_tokens += r.input_tokens
            stats.output_tokens += r.output_tokens
        stats.cost = cost_of(records)
        return stats

    def totals(self) -> dict[str, int]:
        """The counts a results file's ``totals`` holds beside its case counts: the same numbers."""
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }

    def cost_notes(self) -> list[str]:
        """Why part of the cost is unknown: once per model without a price."""
        return self.cost.notes() if self.cost is not None else []


def cache_hits(record: CaseRecord) -> int:
    """The judge answers of a case that came from the verdict cache: one per sample (and per
    order of a pairwise case)."""
    if record.pairwise is not None:
        return sum(len(a.sample_winners) or 1 for a in record.pairwise.answers if a.cached)
    if record.panel is not None:  # each member's samples
        return sum(m.samples for m in record.panel.members if m.cached)
    if record.samples:
        return sum(1 for sample in record.samples if sample.cached)
    return int(record.cached)
