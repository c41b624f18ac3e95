"""Judging: the run's judging service, started early or when the run loop starts, each case
item waiting only for its own outcome, and the case records each report carries."""

from __future__ import annotations

from collections.abc import Generator
from functools import partial
from typing import TYPE_CHECKING, Any

import pytest

from .selection import is_worker, queued_on_worker, selection_is_final

if TYPE_CHECKING:
    from ..models.judge_process import JudgeProcesses
    from ..pipeline.service import JudgingService
    from ..reporting.status_line import StatusLine
    from .progress_plugin import ProgressPlugin
    from .run import Run


class JudgingPlugin:
    def __init__(self, run: Run) -> None:
        self.run = run
        self._service: JudgingService | None = None
        self._judge_process: JudgeProcesses | None = None  # started before collection, see below
        self._early: bool | None = None  # judge calls start as benchmarks are collected

    @property
    def service(self) -> JudgingService:
        """The judging service, created on first use (plain pytest runs never import it)."""
        if self._service is None:
            from ..gating.panel_outcome import combine_panel
            from ..gating.repeats import combine_outcomes
            from ..pipeline.service import JudgingService

            config = self.run.config
            self._service = JudgingService(
                self.run.settings,
                config.rootpath,
                lambda: config.hook.pytest_llmjudge_model(config=config),
                partial(status_line, config),
                combine=partial(combine_outcomes, settings=self.run.settings),
                combine_panel=partial(combine_panel, settings=self.run.settings),
                setup_errors_per_case=is_worker(config),
                judge_process=self._judge_process,
            )
        return self._service

    def start_judge_process(self) -> None:
        """Start the judge process now: it imports the HTTP stack while this process collects."""
        from ..models.judge_process import JudgeProcesses

        self._judge_process = JudgeProcesses()

    def start_early(self, items: list[pytest.Item]) -> None:
        """A benchmark's items exist: when nothing can deselect them, their judge calls start now,
        overlapping the collection of the other files."""
        if self._early is None:
            self._early = selection_is_final(self.run.config)
        if not self._early:
            return
        try:
            self.schedule(items)
        except pytest.UsageError:
            self._early = False  # no usable judge: the run loop reports it, with every case counted

    def schedule(self, items: list[Any]) -> None:
        """Start the judge calls of ``items``' cases in the background."""
        if not self.run.benchmark_files:
            return  # no benchmark collected: nothing to judge, and nothing heavy to import
        from ..models.judges import JudgeSetupError
        from .nodes import CaseItem

        cases = [i for i in items if isinstance(i, CaseItem)]
        if not cases:
            return
        import_report_modules()
        try:
            self.service.schedule(cases)
        except JudgeSetupError as exc:
            raise pytest.UsageError(str(exc)) from None

    def outcome(self, item: Any) -> Any:
        """``item``'s outcome, waiting for its judge call if it is still running."""
        from ..models.judges import JudgeSetupError

        try:
            return self.service.outcome(item)
        except JudgeSetupError as exc:
            raise pytest.UsageError(str(exc)) from None

    def pairwise(self, item: Any) -> Any:
        """A pairwise item's result, waiting for its judge calls if they are still running."""
        from ..models.judges import JudgeSetupError

        try:
            return self.service.pairwise.result(item)
        except JudgeSetupError as exc:
            raise pytest.UsageError(str(exc)) from None

    def produced(self, nodeid: str) -> tuple[Any, Any]:
        """The output a task produced for ``nodeid`` and its judge request, or (None, None)."""
        if self._service is None:
            return None, None
        tasks = self._service.tasks
        return tasks.produced.get(nodeid), tasks.requests.get(nodeid)

    def cache_write_errors(self) -> list[str]:
        return self._service.cache_write_errors if self._service else []

    def local_lines(self) -> list[str]:
        return list(self._service.judges.local_lines.values()) if self._service else []

    def close(self) -> None:
        if self._service is not None:
            self._service.close()  # closes the judge process too
        elif self._judge_process is not None:
            self._judge_process.close()

    # -- hooks ------------------------------------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.run.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if session.config.option.collectonly or is_worker(session.config):
            return
        if self._service is not None:  # started during collection: keep only what was selected
            self._service.cancel_pending(keep={item.nodeid for item in session.items})
        self.schedule(session.items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        if is_worker(self.run.config):
            self.schedule([item, *queued_on_worker(self.run.config, item.session)])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if self.run.benchmark_files:  # else not a benchmark item: nodes.py stays unimported
            attach_record(item, call, report)
        return report

    @pytest.hookimpl(tryfirst=True)  # before --junitxml reads the failure
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record_report(self.run, report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_to_serializable(self, report: pytest.TestReport) -> None:
        """A report that leaves the process (an xdist worker's, ``--report-log``'s) carries its
        record as plain values; one that stays keeps the record itself."""
        record = getattr(report, "llmjudge", None)
        if record is not None and not isinstance(record, dict):
            report.llmjudge = record.to_dict()  # type: ignore[attr-defined]

    def pytest_runtest_logfinish(self) -> None:
        session = self.run.session
        if self._service is not None and session is not None and (session.shouldfail or session.shouldstop):
            self._service.cancel_pending()  # -x / --maxfail: pending judge calls are not needed


def attach_record(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """The case record (and JUnit properties) of a benchmark item's report."""
    from ..reporting.failures import JudgeErrored
    from ..reporting.junit import junit_properties
    from .records import case_record, failure_travels

    if call.excinfo is not None and call.when == "setup" and call.excinfo.errisinstance(JudgeErrored):
        report.longrepr = item.repr_failure(call.excinfo)  # pytest shows setup errors as tracebacks
    failure_travels(report)
    record = case_record(item, report)
    if record is not None and getattr(item, "pairwise_mode", False):
        from .pairwise_items import with_pairwise  # imported when its benchmark was collected

        record = with_pairwise(item, record)  # type: ignore[arg-type]
    if record is not None:
        report.llmjudge = record  # type: ignore[attr-defined]
        for name, value in junit_properties(record):
            item.user_properties.append((name, value))
    if report.failed and getattr(item, "checks_snapshot", False):
        report.llmjudge_snapshot = True  # type: ignore[attr-defined]


def record_report(run: Run, report: pytest.TestReport) -> None:
    """Keep a report's record (also one an xdist worker sent) and whether it failed."""
    if hasattr(report, "llmjudge_failure"):
        from .records import failure_arrived

        failure_arrived(report)
    data = getattr(report, "llmjudge", None)
    if data is not None:
        from ..gating.records import CaseRecord

        run.records.append(CaseRecord.from_dict(data) if isinstance(data, dict) else data)
    if report.failed:
        run.failed_nodeids.add(report.nodeid)
        if getattr(report, "llmjudge_snapshot", False):
            run.snapshot_failures.add(report.nodeid)


def import_report_modules() -> None:
    """Import what each case's report needs before any judge call starts. Imported on the first
    report, it would run just as the first verdict arrives, when a Ctrl-C is most likely; and a
    Ctrl-C inside the source an import exec()s (the methods of a dataclass) makes ``python -m
    pytest`` exit by SIGINT even though pytest handled it (CPython keeps it as unhandled)."""
    from ..reporting import failures, junit, progress_log, summary  # noqa: F401
    from . import records  # noqa: F401


def status_line(config: pytest.Config) -> StatusLine | ProgressPlugin | None:
    """A live status line while items wait for verdicts: interactive terminals only; elsewhere
    the progress lines of CI logs (``progress_plugin``)."""
    import os
    import sys

    from ..reporting.status_line import StatusLine, wanted

    stream = sys.stdout
    verbosity = int(config.get_verbosity())
    if not wanted(stream.isatty(), os.environ, verbosity, is_worker(config)):
        progress: ProgressPlugin | None = config.pluginmanager.get_plugin("llmjudge-progress")
        return progress
    writer = config.get_terminal_writer()
    capture = config.pluginmanager.get_plugin("capturemanager")
    guard = capture.global_and_fixture_disabled if capture is not None else None
    return StatusLine(stream, lambda: writer.width_of_current_line, lambda: writer.fullwidth, guard)
