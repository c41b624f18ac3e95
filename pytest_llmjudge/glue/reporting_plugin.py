"""Reporting: the terminal summary of the run's verdict, and the exit line of a run that exits 0
although cases failed, written after pytest's red final line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .selection import is_worker

if TYPE_CHECKING:
    from .judging_plugin import JudgingPlugin
    from .run import Run


class ReportingPlugin:
    def __init__(self, run: Run, judging: JudgingPlugin) -> None:
        self.run = run
        self.judging = judging  # the judge line and the local servers

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        write_summary(self.run, self.judging, terminalreporter)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        write_closing_exit_line(self.run)


def write_summary(run: Run, judging: JudgingPlugin, terminalreporter: Any) -> None:
    """The run's gate tables, judge line, review list, statistics and exit reasons (those of a run
    that exits 0 although items failed come after pytest's final line: ``write_closing_exit_line``)."""
    verdict = run.verdict
    if verdict is None or not verdict.gates.benchmarks:
        return  # a session without benchmarks imports none of this
    from ..gating.calibration_run import calibration_summary
    from ..gating.costs import benchmark_costs
    from ..reporting.failures import score_conflicts
    from ..reporting.summary import GateSummary, Stats, exit_lines, shorten
    from ..reporting.task_summary import task_lines
    from .run_results import summary_lines

    gates = verdict.gates
    write = terminalreporter.write_line
    terminalreporter.section("llmjudge gates")
    costs = {code: total.text() for code, total in benchmark_costs(run.records).items()}
    for line in GateSummary(list(gates.benchmarks), list(gates.rubrics), costs=costs).lines:
        write(line)
    for line in calibration_summary(list(gates.calibrations)):
        write(line)
    if gates.pairwise:
        from ..reporting.pairwise import pairwise_table

        write("")
        for line in pairwise_table(gates.pairwise):
            write(line)
    from ..reporting.panel_summary import panel_lines

    for line in ["", *panel] if (panel := panel_lines(run.records)) else []:
        write(line)
    write("")
    stats = Stats.from_records(run.records, judging.cache_write_errors())
    write(stats.line())
    for line in task_lines(run.records):
        write(line)
    for line in stats.cost_notes():  # once per model without a price
        write(line, yellow=True)
    for line in score_conflicts(run.records):
        write(line, yellow=True)
    for line in judging.local_lines():
        write(line)
    review = [r for r in run.records if r.needs_review]
    if review:
        from .outputs import output_path
        from .run_results import shown_path

        listed = shown_path(
            output_path(run.config, "review_file", run.settings.review_file), run.config.invocation_params.dir
        )
        write(f"needs human review ({len(review)}, listed in {listed}):", yellow=True)
        for r in review:
            write(f"  {r.benchmark}::{r.case} at {r.location}: {shorten(r.reason)}")
    for line, markup in summary_lines(run):
        write(line, **markup)
    if verdict.failures_tolerated:
        return  # pytest's final line, below, counts the failures in red: the exit line follows it
    for line in exit_lines(verdict.status, verdict.reasons):
        write(line, red=verdict.status != 0, green=verdict.status == 0)


def write_closing_exit_line(run: Run) -> None:
    """A run that exits 0 although items failed ends on its exit decision, after pytest's red final
    line (``N failed, M passed``): the controller's terminal only, once the session is over."""
    reporter = run.config.pluginmanager.get_plugin("terminalreporter")
    verdict = run.verdict
    if reporter is None or is_worker(run.config) or verdict is None or not verdict.failures_tolerated:
        return
    from ..reporting.summary import closing_exit_line

    reporter.write_line(closing_exit_line(verdict.status, verdict.reasons), green=True)
