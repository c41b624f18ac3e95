"""Release gates with statistics, the results file and the HTML report of a judged run.

The run state calls ``release_gates`` once its gates exist (intervals, gate rule, baseline
comparison), ``write_run_results`` once the exit status is decided, and ``summary_lines`` for the
terminal summary. scipy and statsmodels load only here, when there is something to compute.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from ..gating.gates import BenchmarkGate, RubricGate
    from ..gating.records import CaseRecord
    from ..gating.statistics import Comparison, RateInterval
    from ..suite.settings import RunSettings


class RunState(Protocol):
    """What this module reads of the run state."""

    @property
    def config(self) -> pytest.Config: ...
    @property
    def settings(self) -> RunSettings: ...
    @property
    def records(self) -> list[CaseRecord]: ...
    @property
    def benchmark_results(self) -> list[BenchmarkGate]: ...
    @property
    def rubric_results(self) -> list[RubricGate]: ...
    @property
    def calibrations(self) -> list[Any]: ...
    @property
    def exit_reasons(self) -> tuple[str, ...]: ...


STARTED = pytest.StashKey[datetime]()
RESULTS = pytest.StashKey["RunResults"]()


@dataclass
class RunResults:
    intervals: dict[str, RateInterval] = field(default_factory=dict)
    comparisons: list[Comparison] | None = None
    baseline: dict[str, Any] | None = None
    baseline_error: str | None = None  # why the baseline could not be read (fail-on regression)
    path: Path | None = None
    html: Path | None = None
    errors: list[str] = field(default_factory=list)


def _results(config: pytest.Config) -> RunResults:
    if RESULTS not in config.stash:
        config.stash[RESULTS] = RunResults()
    return config.stash[RESULTS]


def release_gates(state: RunState, benchmark_gates: list[BenchmarkGate]) -> list[BenchmarkGate]:
    """The run's benchmark gates with their intervals and gate rule; with a baseline, compared
    case by case, a significant regression failing its gate under ``--llmjudge-fail-on regression``."""
    from ..gating.gates import applied_rule
    from ..suite.vocabulary import JUDGED_TYPES

    settings = state.settings
    results = _results(state.config)
    judges: dict[str, dict[str, Any]] = {}  # each benchmark's judge settings, from its first record
    for record in state.records:
        if record.judge:
            judges.setdefault(record.benchmark, record.judge)
    gates = []
    for gate in benchmark_gates:
        judge = judges.get(gate.code, {})
        judged = judge.get("evaluator_type", "llm_judge") in JUDGED_TYPES
        if gate.interval is not None:  # the gate's own: over the case verdicts it gates
            results.intervals[gate.code] = gate.interval
        gates.append(replace(gate, gate_rule=applied_rule(str(judge.get("gate") or settings.gate), judged)))
    if settings.baseline is None:
        return gates
    if results.baseline is None:  # unreadable under --llmjudge-fail-on regression (read_baseline)
        unchecked = f"regression not checked: {results.baseline_error or '--llmjudge-baseline: not read'}"
        results.errors.append(f"{unchecked}: every gate fails under --llmjudge-fail-on regression")
        return [replace(g, regression=unchecked) for g in gates]
    from ..gating.statistics import compare_benchmarks
    from ..reporting.run_summary import paired_cases

    case_verdicts = _verdicts(state)
    pairs = paired_cases(results.baseline, {g.code: case_verdicts.get(g.code, {}) for g in gates})
    results.comparisons = compare_benchmarks(pairs, margin=settings.margin, alpha=settings.alpha)
    if settings.fail_on != "regression":
        return gates
    regressions = {c.benchmark: c for c in results.comparisons if c.verdict == "regression"}
    return [
        replace(g, regression=regression_detail(regressions[g.code])) if g.code in regressions else g
        for g in gates
    ]


def read_baseline(config: pytest.Config, settings: RunSettings) -> None:
    """Read ``--llmjudge-baseline`` before anything is judged. A file that cannot be read is a
    usage error naming it; under ``--llmjudge-fail-on regression`` the run goes on and every gate
    fails, so a missing or broken baseline cannot switch the regression gate off."""
    if settings.baseline is None:
        return
    from ..reporting.results_file import ResultsFileError, load_results
    from .outputs import output_path

    results = _results(config)
    try:  # a path on the command line is relative to where pytest ran, as the output paths
        results.baseline = load_results(output_path(config, "baseline", settings.baseline))
    except ResultsFileError as error:
        if settings.fail_on != "regression":
            raise pytest.UsageError(f"--llmjudge-baseline: {error}") from None
        results.baseline_error = f"--llmjudge-baseline: {error}"


def _verdicts(state: RunState) -> dict[str, dict[str, bool]]:
    """Each benchmark's release-case verdicts (pass or fail), grouped in one pass over the records.
    A calibration case's result is agreement with its label, and its id may be a release case's."""
    grouped: dict[str, dict[str, bool]] = {}
    for r in state.records:
        if r.result in ("pass", "fail") and not r.calibration:
            grouped.setdefault(r.benchmark, {})[r.case] = r.result == "pass"
    return grouped


def regression_detail(comparison: Comparison) -> str:
    return (
        f"regression against the baseline: {comparison.b} case(s) pass → fail, {comparison.c} fail → pass "
        f"(McNemar p = {comparison.p_adjusted:.3g} Holm-adjusted)"
    )


def write_run_results(state: RunState, session: pytest.Session) -> None:
    """Write the results file (and the HTML report if asked) on the controller, at session end."""
    from .. import __version__
    from ..judging.redact import redact_command
    from ..reporting.results_file import default_results_path
    from ..reporting.results_writer import RunInfo, build_results, suite_digest, write_results
    from .outputs import output_guard, output_path

    config, settings = state.config, state.settings
    results = _results(config)
    info = RunInfo(
        started=config.stash.get(STARTED, datetime.now(UTC)),
        finished=datetime.now(UTC),
        plugin_version=__version__,
        pydantic_ai_version=_version("pydantic-ai-slim") or _version("pydantic-ai") or "",
        command=redact_command(["pytest", *config.invocation_params.args]),  # no credentials
        commit=git_commit(config.rootpath),
        rootdir=str(config.rootpath),
        exit_status=int(session.exitstatus),
        exit_reasons=list(state.exit_reasons),  # decided once, by gating.exit_status.decide_exit
        settings={
            "repeats": settings.repeats,
            "gate": settings.gate,
            "margin": settings.margin,
            "alpha": settings.alpha,
            "fail_on": settings.fail_on,
            "baseline": settings.baseline,
        },
    )
    rubrics = _rubric_members(state.config)
    data = build_results(
        info,
        state.records,
        state.benchmark_results,
        state.rubric_results,
        rubrics,
        results.comparisons,
        _flips(results.baseline, state) if results.baseline is not None else None,
        {c.benchmark: c.to_dict() for c in state.calibrations},
    )
    if settings.results:
        path = output_path(config, "results", settings.results)
    else:
        path = default_results_path(config.rootpath, info.started, suite_digest(state.records))
    try:
        write_results(data, path, bool(settings.results), output_guard(config, settings, path))
        results.path = path
    except OSError as error:
        results.errors.append(f"--llmjudge-results: cannot write {path}: {error}")
    if settings.html:
        from ..reporting.html import write_report

        html = output_path(config, "html", settings.html)
        try:
            write_report(data, html, results.baseline, output_guard(config, settings, html))
            results.html = html
        except OSError as error:
            results.errors.append(f"--llmjudge-html: cannot write {html}: {error}")


def _rubric_members(config: pytest.Config) -> dict[str, list[str]]:
    """Rubric code → its benchmarks, from the rubric files that load (the gates report the others)."""
    from ..suite.errors import SpecError, display_path
    from ..suite.files import load_rubric

    folder = config.rootpath / str(config.getini("llmjudge_rubrics"))
    members = {}
    for path in sorted(folder.rglob("*.y*ml")) if folder.is_dir() else []:
        try:
            rubric = load_rubric(path, display_path(path, config.rootpath)).spec
        except SpecError:
            continue
        members[rubric.code] = list(rubric.benchmarks)
    return members


def _flips(baseline: dict[str, Any], state: RunState) -> list[dict[str, str]]:
    from ..reporting.results_file import case_results

    before = case_results(baseline)  # release cases only
    flips = []
    for r in state.records:
        old = None if r.calibration else before.get((r.benchmark, r.case))
        if old in ("pass", "fail") and r.result in ("pass", "fail") and old != r.result:
            flips.append({"benchmark": r.benchmark, "case": r.case, "baseline": old, "candidate": r.result})
    return flips


def _version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def git_commit(root: Path) -> str | None:
    """The commit checked out at ``root``; None outside a repository or without git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=2, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def summary_lines(state: RunState) -> list[tuple[str, dict[str, bool]]]:
    """Terminal-summary lines (text, markup): intervals, flaky cases, comparison, results path."""
    from ..reporting.run_summary import comparison_table, interval_lines

    results = _results(state.config)
    lines: list[tuple[str, dict[str, bool]]] = [("", {})]
    lines += [(line, {}) for line in interval_lines(state.benchmark_results, results.intervals)]
    flaky = [r for r in state.records if r.flaky]
    if flaky:
        lines.append((f"flaky cases ({len(flaky)}: repeated judge samples disagree):", {"yellow": True}))
        for r in flaky:
            passes = sum(1 for s in r.samples if s["pass"])
            lines.append((f"  {r.benchmark}::{r.case}: {passes} of {len(r.samples)} samples pass", {}))
    repeated_at_zero = sorted(
        {
            r.benchmark
            for r in state.records
            if r.judge and r.judge["repeats"] > 1 and r.judge["temperature"] == 0
        }
    )
    if repeated_at_zero:
        lines.append(
            (
                f"repeats at temperature 0 ({', '.join(repeated_at_zero)}): samples may not be independent",
                {"yellow": True},
            )
        )
    if results.comparisons is not None:
        lines.append(("", {}))
        lines += [(line, {}) for line in comparison_table(results.comparisons)]
    from .outputs import write_errors

    for error in [*write_errors(state.config), *results.errors]:
        lines.append((error, {"red": True}))
    if results.path is not None:
        lines.append((f"results file: {_shown(results.path, state.config.rootpath)}", {}))
    if results.html is not None:
        lines.append((f"HTML report: {_shown(results.html, state.config.rootpath)}", {}))
    return lines


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def started(config: pytest.Config) -> None:
    config.stash[STARTED] = datetime.now(UTC)
