"""The results file (format 1) of a run, built from its records, gates and comparison. Pure:
the glue gathers the values, this module only arranges them as ``results.schema.json`` says."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cost.pricing import unpriced_message
from ..gating.costs import CostTotal, cost_of
from ..gating.drift import judges_seen
from ..gating.records import JudgeFacts, SampleRecord
from ..suite.safe_write import Guard, write_text
from .call_latency import call_latency
from .pairwise import add_pairwise
from .panel_summary import panel_object
from .results_file import FORMAT
from .summary import Stats

if TYPE_CHECKING:
    from ..gating.gates import BenchmarkGate, RubricGate
    from ..gating.judge_drift import JudgeDrift
    from ..gating.pairwise_stats import PairwiseFigures
    from ..gating.records import CaseRecord, ProducedOutput, RequestText
    from ..gating.statistics import Comparison
    from ..judging.verdict import Outcome


def sample_records(outcome: Outcome | None) -> tuple[SampleRecord, ...]:
    """Each judge sample of a case's outcome."""
    if outcome is None:
        return ()
    samples = outcome.samples or (outcome,)
    return tuple(_sample(index, sample) for index, sample in enumerate(samples))


def _sample(index: int, outcome: Outcome) -> SampleRecord:
    verdict = outcome.verdict
    return SampleRecord(
        index,
        verdict.effective_pass if verdict else None,
        verdict.reason if verdict else "",
        verdict.score if verdict else None,
        bool(verdict and verdict.uncertain),
        outcome.cached,
        outcome.usage.input_tokens,
        outcome.usage.output_tokens,
        outcome.latency,
        str(outcome.failure) if outcome.failure else None,
        outcome.usage.cached_input_tokens,
        None if (spent := outcome.usage.spent) is None else float(spent),
        None if outcome.saved is None else float(outcome.saved),
        answered_model=verdict.answered.model if verdict and verdict.answered else None,
        answered_fingerprint=verdict.answered.fingerprint if verdict and verdict.answered else None,
        model_latency_s=outcome.model_latency,
    )


@dataclass(frozen=True)
class RunInfo:
    """What a run knows beyond its records: when, where, how it was started and how it ended."""

    started: datetime
    finished: datetime
    plugin_version: str
    pydantic_ai_version: str
    command: Sequence[str]
    commit: str | None
    rootdir: str
    exit_status: int
    exit_reasons: Sequence[str]
    settings: dict[str, Any]  # repeats, gate, margin, alpha, fail_on, baseline


def suite_digest(records: Sequence[CaseRecord]) -> str:
    """The identity of what the run judged: every benchmark's cases and their request digests."""
    from ..suite.hashing import digest

    return digest(sorted((r.benchmark, r.case, r.prompt_hash) for r in records))


def _utc(moment: datetime) -> str:
    utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def build_results(
    info: RunInfo,
    records: Sequence[CaseRecord],
    gates: Sequence[BenchmarkGate],
    rubrics: Sequence[RubricGate],
    rubric_members: dict[str, list[str]],
    comparisons: Sequence[Comparison] | None,
    flips: list[dict[str, str]] | None,
    calibrations: dict[str, dict[str, Any]] | None = None,
    pairwise: Sequence[PairwiseFigures] | None = None,
    judge_drift: Sequence[JudgeDrift] | None = None,
) -> dict[str, Any]:
    """The format-1 dict of a run; ``calibrations`` maps a benchmark code to its ``calibration``,
    ``pairwise`` holds the pairwise benchmarks' figures."""
    by_benchmark: dict[str, list[CaseRecord]] = {}
    for record in records:
        by_benchmark.setdefault(record.benchmark, []).append(record)
    calibrations = calibrations or {}
    benchmarks = [
        _benchmark(gate, by_benchmark.get(gate.code, []), calibrations.get(gate.code)) for gate in gates
    ]
    add_pairwise(benchmarks, pairwise or (), by_benchmark)
    cases = [c for b in benchmarks for c in b["cases"]]
    totals: dict[str, Any] = {
        "cases": len(cases),
        "passed": sum(1 for c in cases if c["result"] == "pass"),
        "failed": sum(1 for c in cases if c["result"] == "fail"),
        "errors": sum(1 for c in cases if c["result"] == "error"),
        "skipped": sum(1 for c in cases if c["result"] == "skip"),
        "flaky": sum(1 for c in cases if c["flaky"]),
        **Stats.from_records(records).totals(),  # the terminal's judge counts, the same numbers
    }
    totals["cost"] = cost_object(cost_of(records))
    return {
        "format": FORMAT,
        "started": _utc(info.started),
        "finished": _utc(info.finished),
        "plugin_version": info.plugin_version,
        "pydantic_ai_version": info.pydantic_ai_version,
        "command": [str(part) for part in info.command],
        "commit": info.commit,
        "rootdir": info.rootdir,
        "suite_digest": suite_digest(records),
        "exit_status": info.exit_status,
        "exit_reasons": list(info.exit_reasons),
        "settings": info.settings,
        "totals": totals,
        "call_latency": call_latency(records),
        "benchmarks": benchmarks,
        "rubrics": [_rubric(r, rubric_members.get(r.code, [])) for r in rubrics],
        "comparison": None if comparisons is None else [c.to_dict() for c in comparisons],
        "flips": flips,
        "judge_drift": None if judge_drift is None else [d.to_dict() for d in judge_drift],
    }


def _benchmark(
    gate: BenchmarkGate, records: list[CaseRecord], calibration: dict[str, Any] | None = None
) -> dict[str, Any]:
    found = next((r.judge for r in records if r.judge is not None), None)
    judge = found or JudgeFacts()
    return {
        "code": gate.code,
        "label": gate.label,
        "threshold": gate.threshold,
        "criticality": gate.criticality,
        "weight": gate.weight,
        "parent_rubric": gate.parent_rubric,
        "evaluator_type": judge.evaluator_type,
        "judge": asdict(judge.fingerprint) if judge.fingerprint else None,
        "repeats": judge.repeats,
        "reduce": judge.reduce,
        "gate_rule": gate.gate_rule,
        "request": {"instructions": judge.instructions, "rubric": judge.rubric} if found else None,
        "gate": _gate(gate),
        "calibration": calibration,
        "judges": [seen.to_json() for seen in judges_seen(records)],
        "trust": _trust(records[0]) if records else None,
        "cases": [_case(r) for r in records if r.case],
        "cost": cost_object(cost_of(records)),
        "panel": panel_object(records),
    }


def _trust(record: CaseRecord) -> dict[str, Any] | None:
    """The benchmark's calibration minimums (the same in each of its records), so that merged
    shards decide the judge's trust as one run would."""
    if record.min_tpr is None and record.min_tnr is None and record.min_labels is None:
        return None
    return {"min_tpr": record.min_tpr, "min_tnr": record.min_tnr, "min_labels": record.min_labels}


def cost_object(total: CostTotal) -> dict[str, Any]:
    """A results-file ``cost``: USD (null when a model without a price was called), the priced
    part, what the cache saved, and why a model has no cost."""
    known = total.known
    return {
        "usd": None if known is None else float(known),
        "priced_usd": float(total.usd),
        "saved_usd": float(total.saved),
        "unpriced": [{"model": m, "reason": unpriced_message(m)} for m in total.unpriced],
    }


def _gate(gate: BenchmarkGate) -> dict[str, Any]:
    from ..gating.gates import why
    from ..gating.statistics import LOW_EVIDENCE_VERDICTS

    return {
        "status": gate.status,
        "cases": gate.cases,
        "passed": gate.passed,
        "failed": gate.failed,
        "errors": gate.errors,
        "skipped": gate.skipped,
        "review": gate.review,
        "flaky": gate.flaky,
        "pass_rate": gate.pass_rate,
        "ci_low": gate.ci_low,
        "ci_high": gate.ci_high,
        "interval_method": None if gate.interval is None else gate.interval.method,
        "basis": "cases",  # the rate and its interval count case verdicts (samples reduced first)
        "collected": gate.collected,  # so merged shards know whether every case ran
        "low_evidence": gate.verdicts < LOW_EVIDENCE_VERDICTS,
        "detail": why(gate),  # the terminal's and the exit reasons' wording
    }


def _case(record: CaseRecord) -> dict[str, Any]:
    return {
        "id": record.case,
        "nodeid": record.nodeid,
        "location": record.location,
        "calibration": record.calibration,
        "request_digest": record.prompt_hash,
        "label": record.case_label,
        "result": record.result,
        "reason": record.reason,
        "score": record.score,
        "uncertain": record.uncertain,
        "flaky": record.flaky,
        "stability": record.stability,
        "request": _flat(record.request) if record.request else None,
        "samples": [s.to_results() for s in record.samples],
        "produced": _flat(record.produced) if record.produced else None,
        "cost_usd": record.cost_usd,
        "saved_usd": record.saved_usd,
        "pairwise": record.pairwise.to_results() if record.pairwise else None,
        "panel": record.panel.to_results() if record.panel else None,
    }


def _flat(value: RequestText | ProducedOutput) -> dict[str, Any]:
    """A dataclass whose fields hold no dataclass, as ``asdict`` gives it without the deep copy:
    the results file is written at once (1,000 cases: 25 ms less at the end of a run)."""
    return {f.name: getattr(value, f.name) for f in fields(value)}


def _rubric(rubric: RubricGate, members: list[str]) -> dict[str, Any]:
    return {
        "code": rubric.code,
        "label": rubric.label,
        "aggregation": rubric.method,
        "benchmarks": members,
        "score": rubric.score,
        "threshold": rubric.threshold,
        "status": rubric.status,
        "detail": rubric.detail,
    }


def write_results(
    results: dict[str, Any], path: Path, overwrite: bool = False, guard: Guard | None = None
) -> None:
    """Write ``results`` to ``path`` whole or not at all (its folder made); over an existing file
    only if ``overwrite``, and never over one the ``guard`` refuses. Failures are ``OSError``."""
    # one line per benchmark, each case on its own line: readable in a diff, and written by the
    # C encoder (an indented dump is pure Python: 0.23 s of a cached 1,000-case run)
    benchmarks = results.get("benchmarks") or []
    head = {key: value for key, value in results.items() if key != "benchmarks"}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "benchmarks": [']
    for index, benchmark in enumerate(benchmarks):
        cases = benchmark.get("cases") or []
        rest = {key: value for key, value in benchmark.items() if key != "cases"}
        lines.append(" " + json.dumps(rest, ensure_ascii=False)[:-1] + ', "cases": [')
        lines += [
            f"  {json.dumps(case, ensure_ascii=False)}{',' if i < len(cases) - 1 else ''}"
            for i, case in enumerate(cases)
        ]
        lines.append(" ]}" + ("," if index < len(benchmarks) - 1 else ""))
    lines.append("]}")
    write_text(path, "\n".join(lines) + "\n", replace=overwrite, guard=guard)
