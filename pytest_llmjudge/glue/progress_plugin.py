"""Progress lines in CI logs: the ``ProgressLog`` of a run whose output is not a terminal, fed
each case's record as it is reported and asked for a timed line while an item waits."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

from .selection import is_worker

if TYPE_CHECKING:
    from ..reporting.progress_log import ProgressLog
    from .run import Run


class ProgressPlugin:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.log: ProgressLog | None = None
        self._seen = 0  # run.records already counted
        self._declined = False  # an xdist controller whose output wants no progress lines

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        config = session.config
        if not self.run.benchmark_files or config.option.collectonly:
            return  # a session without benchmarks imports none of this
        from ..reporting import progress_log
        from .nodes import CaseItem

        if not progress_log.wanted(
            sys.stdout.isatty(), os.environ, config.get_verbosity(), is_worker(config)
        ):
            return
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        total = sum(1 for item in session.items if isinstance(item, CaseItem))
        self.log = progress_log.ProgressLog(total, reporter.write_line)

    @pytest.hookimpl(trylast=True)  # after the judging plugin has kept the report's record
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if len(self.run.records) <= self._seen:
            return
        if self.log is None and self._on_controller:
            self.log = self._controller_log()
        if self.log is not None:
            self.log.add(self.run.records[self._seen :])
        self._seen = len(self.run.records)

    @property
    def _on_controller(self) -> bool:
        """An xdist controller: it collects nothing itself, its workers' records reach it."""
        return self.run.config.pluginmanager.has_plugin("dsession")

    def _controller_log(self) -> ProgressLog | None:
        """The controller's progress lines, made on its first benchmark record: the timed lines
        only, since it never knows how many cases its workers collected."""
        from ..reporting import progress_log

        config = self.run.config
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if (
            reporter is None
            or self._declined
            or not progress_log.wanted(
                sys.stdout.isatty(), os.environ, config.get_verbosity(), is_worker(config)
            )
        ):
            self._declined = True
            return None
        writer = config.get_terminal_writer()

        def write(line: str) -> None:
            if writer.width_of_current_line:  # xdist's progress dots: end their line first
                writer.line()
            reporter.write_line(line)

        return progress_log.ProgressLog(0, write)

    # -- the scheduler's ``Waiting``: told while an item waits for its verdict ----------------

    def waiting(self, progress: Any) -> None:
        if self.log is None:
            return
        capture = self.run.config.pluginmanager.get_plugin("capturemanager")
        if capture is None:
            self.log.tick()
            return
        with capture.global_and_fixture_disabled():
            self.log.tick()

    def resumed(self) -> None:
        """Nothing to erase: a progress line stays in the log."""
