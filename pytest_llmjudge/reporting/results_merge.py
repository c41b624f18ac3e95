"""The results files of a suite's shards (CI matrix jobs, ``-k`` slices) as one run's: checked
to be shards of one suite, their cases' records rebuilt, and the run verdict decided again from
them by the functions a run uses (``gating.run_verdict``). Pure: the command reads and writes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..cost.budget import OVER
from ..gating.records import CaseRecord
from .results_model import Benchmark, ResultsFile
from .results_records import RubricOfResults, records_of, rubrics_of

if TYPE_CHECKING:
    from ..gating.calibration_run import BenchmarkCalibration
    from ..gating.run_verdict import RunVerdict

# what a benchmark must be alike in every shard that ran some of its cases
_ALIKE = (
    "label",
    "threshold",
    "criticality",
    "weight",
    "parent_rubric",
    "evaluator_type",
    "judge",
    "repeats",
    "reduce",
    "gate_rule",
    "request",
    "trust",
)


class MergeError(Exception):
    """Results files that are not shards of one suite run the same way."""


@dataclass(frozen=True)
class Shard:
    name: str  # as the user gave it
    results: ResultsFile
    raw: dict[str, Any]  # as read (each case is written back as it was)


def check_shards(shards: Sequence[Shard]) -> None:
    """Refuse files that are not shards of one suite: settings, a benchmark's judge or gate that
    differ, or a case judged in two shards. The message names the files and the difference."""
    if len(shards) < 2:
        raise MergeError("give the results files of two shards or more")
    first = shards[0]
    seen_benchmarks: dict[str, tuple[str, Benchmark]] = {}
    seen_cases: dict[tuple[str, bool, str], str] = {}
    for shard in shards:
        if shard.results.settings != first.results.settings:
            theirs, mine = first.raw["settings"], shard.raw["settings"]
            key = _first_difference(theirs, mine)
            raise MergeError(
                f"{shard.name}: settings.{key} differs from {first.name}'s: {_pair(theirs, mine, key)}"
            )
        for benchmark in shard.results.benchmarks:
            _check_benchmark(shard.name, benchmark, seen_benchmarks)
            for case in benchmark.cases:
                where = (benchmark.code, case.calibration, case.id)
                if where in seen_cases:
                    raise MergeError(
                        f"{shard.name}: case {benchmark.code}::{case.id} is also in {seen_cases[where]}: "
                        "each case belongs to one shard"
                    )
                seen_cases[where] = shard.name


def _check_benchmark(name: str, benchmark: Benchmark, seen: dict[str, tuple[str, Benchmark]]) -> None:
    if benchmark.code not in seen:
        seen[benchmark.code] = (name, benchmark)
        return
    other_name, other = seen[benchmark.code]
    mine, theirs = benchmark.model_dump(), other.model_dump()
    for key in _ALIKE:
        if mine[key] != theirs[key]:
            detail = _difference(key, theirs[key], mine[key])
            shown = _shown(theirs, mine, key)
            raise MergeError(
                f"{name}: benchmark {benchmark.code}: {detail} differs from {other_name}'s: {shown}"
            )
    if benchmark.gate.collected != other.gate.collected:
        raise MergeError(
            f"{name}: benchmark {benchmark.code} has {benchmark.gate.collected} cases, "
            f"{other.gate.collected} in {other_name}: shards of one suite collect the same cases"
        )


def _difference(key: str, theirs: Any, mine: Any) -> str:
    """``judge.model`` for a judge whose model differs: the first key that does."""
    if isinstance(theirs, dict) and isinstance(mine, dict):
        return f"{key}.{_first_difference(theirs, mine)}"
    return key


def _first_difference(one: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    return next(k for k in [*one, *other] if one.get(k) != other.get(k))


def _pair(one: Mapping[str, Any], other: Mapping[str, Any], key: str) -> str:
    return f"{one.get(key)!r} there, {other.get(key)!r} here"


def _shown(theirs: Mapping[str, Any], mine: Mapping[str, Any], key: str) -> str:
    if isinstance(theirs[key], dict) and isinstance(mine[key], dict):
        inner = _first_difference(theirs[key], mine[key])
        return _pair(theirs[key], mine[key], inner)
    return _pair(theirs, mine, key)


def merged_records(shards: Sequence[Shard]) -> list[CaseRecord]:
    """Every shard's records in the order one run collects them (by file, then line); a
    benchmark that some shard ran cases of loses the empty record another shard kept for it."""
    records = [r for shard in shards for r in records_of(shard.results)]
    with_cases = {r.benchmark for r in records if r.case}
    kept = [r for r in records if r.case or r.benchmark not in with_cases]
    unique = list({(r.benchmark, r.calibration, r.case): r for r in kept}.values())
    return sorted(unique, key=_collection_order)


def _collection_order(record: CaseRecord) -> tuple[str, int, str]:
    path, _, line = record.location.rpartition(":")
    file = record.nodeid.split("::", 1)[0] if record.nodeid else path
    return (file, int(line) if line.isdigit() else 0, record.case)


def merged_rubrics(shards: Sequence[Shard]) -> list[RubricOfResults]:
    return list({r.code: r for shard in shards for r in rubrics_of(shard.results)}.values())


@dataclass(frozen=True)
class Signals:
    """What a shard's exit reasons say beyond its records (a run would know them itself)."""

    status: int  # pytest's own exit status before the gates
    broken: bool
    snapshot_failed: bool
    over_budget: str | None


def signals_of(shards: Sequence[Shard], records: Sequence[CaseRecord]) -> Signals:
    from ..gating.exit_status import TESTS_FAILED

    reasons = [reason for shard in shards for reason in shard.results.exit_reasons]
    stopped = [int(r.split()[5]) for r in reasons if r.startswith("pytest stopped with exit status ")]
    broken = "a benchmark or rubric file did not load (errors above)" in reasons
    snapshot = any(r.startswith("compiled judge requests differ from their snapshots") for r in reasons)
    failed = any(r.result in ("fail", "error") for r in records if r.case)
    status = max([*stopped, TESTS_FAILED if failed or snapshot or broken else 0])
    over = next((r for r in reasons if r.startswith(OVER)), None)
    return Signals(status, broken, snapshot, over)


def merged_verdict(
    records: Sequence[CaseRecord],
    shards: Sequence[Shard],
    *,
    baseline: Mapping[str, Any] | None,
    baseline_error: str | None,
    calibrations: Sequence[BenchmarkCalibration],
) -> RunVerdict:
    """The verdict one run of every shard's cases decides: ``gate_run`` then ``decide_run``."""
    from ..gating.run_verdict import GateSettings, decide_run, gate_run

    settings = shards[0].results.settings
    rule = GateSettings(
        settings.gate, settings.margin, settings.alpha, settings.fail_on, bool(settings.baseline)
    )
    gates = gate_run(
        records,
        rule,
        baseline=baseline,
        baseline_error=baseline_error,
        calibrations=calibrations,
        rubrics=merged_rubrics(shards),
    )
    signals = signals_of(shards, records)
    verdict = decide_run(
        gates,
        signals.status,
        broken=signals.broken,
        snapshot_failed=signals.snapshot_failed,
        failed_nodeids=[r.nodeid for r in records if r.case and r.result in ("fail", "error")],
        records=records,
        over_budget=signals.over_budget,
    )
    return with_pending(verdict, pending_of(shards))


_PENDING = re.compile(r"^pending: (\d+) requests? in (\d+) batch(?:es)?; (collect with .*)$")


def pending_of(shards: Sequence[Shard]) -> str | None:
    """The shards' ``pending: N requests in M batches; collect with …`` reasons added up (each
    shard's requests wait under its own ``.llmjudge/batches``); None when none left any."""
    found = [m for shard in shards for r in shard.results.exit_reasons if (m := _PENDING.match(r))]
    if not found:
        return None
    requests, batches = (sum(int(m.group(i)) for m in found) for i in (1, 2))
    return (
        f"pending: {requests} request{'s' if requests != 1 else ''} in {batches} "
        f"batch{'es' if batches != 1 else ''}; {found[0].group(3)} (in each shard's job)"
    )


def with_pending(verdict: RunVerdict, reason: str | None) -> RunVerdict:
    """``verdict`` failing for ``reason`` (``pending: …``), if any: nothing that waits was decided."""
    from dataclasses import replace

    from ..gating.exit_status import TESTS_FAILED
    from ..gating.run_verdict import NOTHING_FAILED

    if reason is None:
        return verdict
    reasons = (*(r for r in verdict.reasons if r != NOTHING_FAILED), reason)
    return replace(verdict, status=max(verdict.status, TESTS_FAILED), reasons=reasons)


def merged_results(
    shards: Sequence[Shard], records: Sequence[CaseRecord], verdict: RunVerdict, command: Sequence[str]
) -> dict[str, Any]:
    """The results file of the merged run: its verdict, each case as its shard wrote it, the
    shards' call counts and costs added up."""
    from .results_writer import RunInfo, build_results

    first = shards[0].results
    gates = verdict.gates
    info = RunInfo(
        started=min(datetime.fromisoformat(s.results.started) for s in shards),
        finished=max(datetime.fromisoformat(s.results.finished) for s in shards),
        plugin_version=first.plugin_version,
        pydantic_ai_version=first.pydantic_ai_version,
        command=list(command),
        commit=first.commit,
        rootdir=first.rootdir,
        exit_status=verdict.status,
        exit_reasons=list(verdict.reasons),
        settings=shards[0].raw["settings"],
    )
    members = {r.code: list(r.benchmarks) for r in merged_rubrics(shards)}
    data = build_results(
        info,
        records,
        gates.benchmarks,
        gates.rubrics,
        members,
        gates.comparisons,
        [f.to_dict() for f in gates.flips] if gates.flips is not None else None,
        {c.benchmark: c.to_dict() for c in gates.calibrations},
        pairwise=gates.pairwise,
    )
    _restore_shards(data, shards)
    return data


def _restore_shards(data: dict[str, Any], shards: Sequence[Shard]) -> None:
    """Each case as its shard wrote it, and what the shards counted of their calls, added up
    (a record keeps neither every figure of a case nor its calls)."""
    cases: dict[tuple[str, bool, str], dict[str, Any]] = {}
    costs: dict[str, list[dict[str, Any] | None]] = {}
    judges: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {}
    for shard in shards:
        for benchmark in shard.raw["benchmarks"]:
            costs.setdefault(benchmark["code"], []).append(benchmark.get("cost"))
            seen = judges.setdefault(benchmark["code"], {})
            for judge in benchmark.get("judges") or ():
                identity = (judge["requested"], judge["model"], judge["fingerprint"])
                total = seen.setdefault(identity, {**judge, "verdicts": 0})
                total["verdicts"] += judge["verdicts"]
            for case in benchmark["cases"]:
                cases[(benchmark["code"], bool(case["calibration"]), case["id"])] = case
    for benchmark in data["benchmarks"]:
        code = benchmark["code"]
        benchmark["cases"] = [
            cases.get((code, bool(c["calibration"]), c["id"]), c) for c in benchmark["cases"]
        ]
        benchmark["cost"] = added_costs(costs.get(code, []))
        if "judges" in benchmark or judges.get(code):
            ranked = sorted(judges.get(code, {}).values(), key=lambda j: -int(j["verdicts"]))
            benchmark["judges"] = ranked
    totals = data["totals"]
    for key in ("calls", "cache_hits", "input_tokens", "output_tokens"):
        totals[key] = sum(int(shard.raw["totals"][key]) for shard in shards)
    totals["cost"] = added_costs([shard.raw["totals"].get("cost") for shard in shards])


def added_costs(costs: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """Results-file ``cost`` objects added up: USD is null when any part is (a model without a
    price was called); a file of an earlier version, with no cost, adds nothing."""
    present = [c for c in costs if c is not None]
    unpriced = list({u["model"]: u for c in present for u in c["unpriced"]}.values())
    known = [c["usd"] for c in present]
    return {
        "usd": None if any(u is None for u in known) else sum(known),
        "priced_usd": sum(c["priced_usd"] for c in present),
        "saved_usd": sum(c["saved_usd"] for c in present),
        "unpriced": unpriced,
    }
