"""Collection: benchmark codes claimed once, collection errors of benchmark files kept apart (one
broken benchmark never stops the others), and why a YAML file named on the command line was not
collected."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from . import gcfreeze
from .selection import not_collected_hints

if TYPE_CHECKING:
    from ..suite.files import Benchmark
    from .run import Run


class CollectionPlugin:
    def __init__(self, run: Run) -> None:
        self.run = run

    def benchmark_file_collected(self, nodeid: str) -> None:
        run = self.run
        if not run.benchmark_files:
            # What is alive now (pytest, plugins, the judge's libraries) lives as long as the
            # process, and so does what collecting the suite builds: no collection until it is
            # collected (see gcfreeze).
            run.frozen = run.gc_paused = gcfreeze.pause()
        run.benchmark_files.add(nodeid)

    def benchmark_loaded(self, nodeid: str, benchmark: Benchmark) -> None:
        """Keep the files a loaded benchmark names: no output of the run may replace them, and
        the end of the run need not read the benchmark files again to know them."""
        from ..suite.read_files import files_named

        self.run.named_files[nodeid] = files_named(self.run.config.rootpath, nodeid, benchmark.spec)

    def claim_code(self, benchmark: Benchmark) -> None:
        """Record a benchmark's code; a second file with the same code is an error naming both."""
        where = f"{benchmark.location.path}:{benchmark.location.line}"
        first = self.run.codes.setdefault(benchmark.code, where)
        if first != where:
            from ..suite.errors import SpecError

            raise SpecError(
                benchmark.location,
                "code",
                f"duplicate benchmark code '{benchmark.code}' (also defined at {first})",
                "benchmark codes must be unique across the suite",
            )

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        return not_collected_hints(config, self.run.benchmark_files)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.run.collect_failures.add(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        run = self.run
        if run.collect_failures and run.collect_failures <= run.benchmark_files:
            # One broken benchmark file must not stop the others: its collection error is
            # reported (and fails the run), the rest still run.
            session.config.option.continue_on_collection_errors = True
        if run.benchmark_files and not session.config.option.collectonly:
            run.frozen = gcfreeze.resume(run.gc_paused)  # so does the collected suite
            run.gc_paused = False
