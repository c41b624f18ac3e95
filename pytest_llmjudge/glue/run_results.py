"""The baseline read when the run starts, and the results file, HTML report and summary lines of
the run's verdict (``gating.run_verdict``), which they only render."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..gating.judge_drift import JudgeDrift
    from ..reporting.results_writer import RunInfo
    from ..suite.safe_write import Guard
    from ..suite.settings import RunSettings
    from .run import Run


STARTED = pytest.StashKey[datetime]()
RESULTS = pytest.StashKey["RunResults"]()


@dataclass
class RunResults:
    """What the run's outputs need beyond its verdict: the baseline read at the start, where the
    files went, what could not be written."""

    baseline: dict[str, Any] | None = None
    baseline_error: str | None = None  # why the baseline could not be read (fail-on regression)
    path: Path | None = None
    html: Path | None = None
    errors: list[str] = field(default_factory=list)


def _results(config: pytest.Config) -> RunResults:
    if RESULTS not in config.stash:
        config.stash[RESULTS] = RunResults()
    return config.stash[RESULTS]


def read_baseline(config: pytest.Config, settings: RunSettings) -> None:
    """Read ``--llmjudge-baseline`` before anything is judged. A file that cannot be read is a
    usage error naming it; under ``--llmjudge-fail-on regression`` the run goes on and every gate
    fails, so a missing or broken baseline cannot switch the regression gate off."""
    from .rejudging import check_rejudge_baseline

    if settings.baseline is None:
        check_rejudge_baseline(config, settings, None)
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
    check_rejudge_baseline(config, settings, results.baseline)


def baseline_of(config: pytest.Config) -> tuple[dict[str, Any] | None, str | None]:
    """The baseline read when the run started, or why it could not be read."""
    results = _results(config)
    return results.baseline, results.baseline_error


def rejudged_baseline(run: Run) -> tuple[dict[str, Any] | None, str | None, tuple[JudgeDrift, ...] | None]:
    """``baseline_of``; under ``--llmjudge-rejudge-baseline`` the baseline's outputs judged by this
    run's judge (what every output then shows as the baseline), and the judge's drift on them."""
    baseline, error = baseline_of(run.config)
    if baseline is None or not run.settings.rejudge_baseline:
        return baseline, error, None
    from .rejudging import rejudge_baseline

    baseline, drift = rejudge_baseline(run, baseline)
    _results(run.config).baseline = baseline
    return baseline, error, drift


def write_run_results(run: Run) -> None:
    """Write the results file (and the HTML report if asked) on the controller, at session end:
    the run's verdict, rendered."""
    from ..reporting.results_file import default_results_path
    from ..reporting.results_writer import build_results, suite_digest, write_results
    from .outputs import benchmark_sources, output_guard, output_path

    config, settings, verdict = run.config, run.settings, run.verdict
    assert verdict is not None
    results = _results(config)
    info = _run_info(run)
    gates = verdict.gates
    data = build_results(
        info,
        run.records,
        gates.benchmarks,
        gates.rubrics,
        run.rubrics.members if run.rubrics is not None else {},
        gates.comparisons,
        [f.to_dict() for f in gates.flips] if gates.flips is not None else None,
        {c.benchmark: c.to_dict() for c in gates.calibrations},
        pairwise=gates.pairwise,
        judge_drift=gates.drift,
    )
    if settings.results:
        path = output_path(config, "results", settings.results)
    else:
        path = default_results_path(config.rootpath, info.started, suite_digest(run.records))
    sources = benchmark_sources(run)

    def guard(target: Path) -> Guard:
        return output_guard(config, settings, target, sources, run.named_files)

    try:
        write_results(data, path, bool(settings.results), guard(path))
        results.path = path
    except OSError as error:
        results.errors.append(f"--llmjudge-results: cannot write {path}: {error}")
    if settings.html:
        from ..reporting.html import write_report

        html = output_path(config, "html", settings.html)
        try:
            write_report(data, html, results.baseline, guard(html))
            results.html = html
        except OSError as error:
            results.errors.append(f"--llmjudge-html: cannot write {html}: {error}")


def _run_info(run: Run) -> RunInfo:
    """What the results file says about the run itself: when, which versions, the command, the
    commit, the exit status and its reasons, the settings that decide the gates."""
    from .. import __version__
    from ..models.redact import redact_command
    from ..reporting.results_writer import RunInfo

    config, settings, verdict = run.config, run.settings, run.verdict
    assert verdict is not None
    return RunInfo(
        started=config.stash.get(STARTED, datetime.now(UTC)),
        finished=datetime.now(UTC),
        plugin_version=__version__,
        pydantic_ai_version=_version("pydantic-ai-slim") or _version("pydantic-ai") or "",
        command=redact_command(["pytest", *config.invocation_params.args]),  # no credentials
        commit=git_commit(config.rootpath),
        rootdir=str(config.rootpath),
        exit_status=verdict.status,
        exit_reasons=list(verdict.reasons),
        settings={
            "repeats": settings.repeats,
            "gate": settings.gate,
            "margin": settings.margin,
            "alpha": settings.alpha,
            "fail_on": settings.fail_on,
            "baseline": settings.baseline,
        },
    )


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


def summary_lines(run: Run) -> list[tuple[str, dict[str, bool]]]:
    """Terminal-summary lines (text, markup): intervals, flaky cases, comparison, results path."""
    from ..reporting.run_summary import comparison_table, interval_lines

    assert run.verdict is not None
    gates = run.verdict.gates
    results = _results(run.config)
    lines: list[tuple[str, dict[str, bool]]] = [("", {})]
    from ..gating.drift import judge_lines, judges_seen

    lines += [(line, {}) for line in judge_lines(judges_seen(run.records))]
    absolute = [g for g in gates.benchmarks if g.gate_rule != "pairwise"]  # pairwise: their own table
    lines += [(line, {}) for line in interval_lines(absolute)] if absolute else []
    flaky = [r for r in run.records if r.flaky]
    if flaky:
        lines.append((f"flaky cases ({len(flaky)}: repeated judge samples disagree):", {"yellow": True}))
        for r in flaky:
            passes = sum(1 for s in r.samples if s.passed)
            lines.append((f"  {r.benchmark}::{r.case}: {passes} of {len(r.samples)} samples pass", {}))
    repeated_at_zero = sorted(
        {r.benchmark for r in run.records if r.judge and r.judge.repeats > 1 and r.judge.temperature == 0}
    )
    if repeated_at_zero:
        lines.append(
            (
                f"repeats at temperature 0 ({', '.join(repeated_at_zero)}): samples may not be independent",
                {"yellow": True},
            )
        )
    if gates.drift is not None:  # --llmjudge-rejudge-baseline: the judge alone, on identical outputs
        lines += [
            (f"{d.benchmark}: {d.text()}", {"yellow": bool(d.pass_to_fail + d.fail_to_pass)})
            for d in gates.drift
        ]
    if gates.comparisons is not None:
        lines.append(("", {}))
        lines += [(line, {}) for line in comparison_table(gates.comparisons)]
    from .outputs import write_errors

    for error in [*write_errors(run.config), *gates.notes, *results.errors]:
        lines.append((error, {"red": True}))
    here = run.config.invocation_params.dir
    if results.path is not None:
        lines.append((f"results file: {shown_path(results.path, here)}", {}))
    if results.html is not None:
        lines.append((f"HTML report: {shown_path(results.html, here)}", {}))
    return lines


def shown_path(path: Path, here: Path) -> str:
    """``path`` as the user can open it from ``here``, where pytest ran: relative when it lies
    below, else absolute (the rootdir may be a parent of where pytest ran)."""
    try:
        return str(path.resolve().relative_to(here.resolve()))
    except ValueError:
        return str(path.resolve())


def started(config: pytest.Config) -> None:
    config.stash[STARTED] = datetime.now(UTC)
