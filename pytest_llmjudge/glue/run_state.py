"""Run state of one pytest session: wires pytest's hooks to the judging service, the gates and
the reports. Each hook hands off in a few lines; the decisions live in the pure packages."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import pytest

from ..suite.settings import RunSettings, prompt_style_for
from . import gcfreeze, snapshots
from .selection import is_worker, not_collected_hints, queued_on_worker, selection_is_final
from .stash import STATE as STATE

if TYPE_CHECKING:
    from ..gating.gates import BenchmarkGate, RubricGate
    from ..gating.records import CaseRecord
    from ..judging.service import JudgingService
    from ..reporting.status_line import StatusLine
    from ..suite.files import Benchmark


@dataclass(eq=False)  # registered as a pytest plugin, so it must stay hashable
class RunState:
    config: pytest.Config
    settings: RunSettings
    codes: dict[str, str] = field(default_factory=dict)
    records: list[CaseRecord] = field(default_factory=list)
    failed_nodeids: set[str] = field(default_factory=set)
    tolerated_failures: frozenset[str] = frozenset()
    exit_reasons: tuple[str, ...] = ()  # why the exit status is what it is (gating.exit_status)
    benchmark_results: list[BenchmarkGate] = field(default_factory=list)
    calibrations: list[Any] = field(default_factory=list)  # BenchmarkCalibration, one per benchmark
    rubric_results: list[RubricGate] = field(default_factory=list)
    rubric_errors: list[str] = field(default_factory=list)
    parent_rubrics: dict[str, tuple[str, Any]] = field(default_factory=dict)  # code -> (rubric, where)
    session: pytest.Session | None = None
    benchmark_files: set[str] = field(default_factory=set)
    collect_failures: set[str] = field(default_factory=set)
    frozen: bool = False
    _early: bool | None = None  # judge calls start as benchmarks are collected (see ``start_early``)
    _service: JudgingService | None = None

    def __post_init__(self) -> None:
        gcfreeze.opened(self)
        snapshots.register(self.config)  # keeps the snapshots of what a run did not check

    @property
    def service(self) -> JudgingService:
        """The judging service, created on first use (plain pytest runs never import it)."""
        if self._service is None:
            from ..gating.repeats import combine_outcomes
            from ..judging.service import JudgingService

            self._service = JudgingService(
                self.settings,
                self.config.rootpath,
                lambda: self.config.hook.pytest_llmjudge_model(config=self.config),
                partial(status_line, self.config),
                combine=partial(combine_outcomes, settings=self.settings),
                setup_errors_per_case=is_worker(self.config),
            )
        return self._service

    # -- collection -------------------------------------------------------------------------

    def benchmark_file_collected(self, nodeid: str) -> None:
        if not self.benchmark_files:
            # What is alive now (pytest, plugins, the judge's libraries) lives as long as the
            # process: full collections during collection need not walk it again.
            self.frozen = gcfreeze.freeze()
        self.benchmark_files.add(nodeid)

    def claim_code(self, benchmark: Benchmark) -> None:
        """Record a benchmark's code; a second file with the same code is an error naming both."""
        where = f"{benchmark.location.path}:{benchmark.location.line}"
        first = self.codes.setdefault(benchmark.code, where)
        if first != where:
            from ..suite.errors import SpecError

            raise SpecError(
                benchmark.location,
                "code",
                f"duplicate benchmark code '{benchmark.code}' (also defined at {first})",
                "benchmark codes must be unique across the suite",
            )

    def prompt_style(self, benchmark: Benchmark) -> str:
        return prompt_style_for(benchmark, self.settings)

    def start_early(self, items: list[pytest.Item]) -> None:
        """A benchmark's items exist: when nothing can deselect them, their judge calls start now,
        overlapping the collection of the other files."""
        if self._early is None:
            self._early = selection_is_final(self.config)
        if not self._early:
            return
        try:
            self.schedule(items)
        except pytest.UsageError:
            self._early = False  # no usable judge: the run loop reports it, with every case counted

    # -- judging ----------------------------------------------------------------------------

    def schedule(self, items: list[Any]) -> None:
        """Start the judge calls of ``items``' cases in the background."""
        if not self.benchmark_files:
            return  # no benchmark collected: nothing to judge, and nothing heavy to import
        from ..judging.judges import JudgeSetupError
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
        from ..judging.judges import JudgeSetupError

        try:
            return self.service.outcome(item)
        except JudgeSetupError as exc:
            raise pytest.UsageError(str(exc)) from None

    def produced(self, nodeid: str) -> tuple[Any, Any]:
        """The output a task produced for ``nodeid`` and its judge request, or (None, None)."""
        if self._service is None:
            return None, None
        tasks = self._service.tasks
        return tasks.produced.get(nodeid), tasks.requests.get(nodeid)

    def close(self) -> None:
        gcfreeze.closed(self, self.frozen)
        self.frozen = False
        if self._service is not None:
            self._service.close()

    # -- hooks ------------------------------------------------------------------------------

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        """A YAML file named on the command line that is not a collected benchmark: say why."""
        return not_collected_hints(config, self.benchmark_files)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_failures.add(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if self.collect_failures and self.collect_failures <= self.benchmark_files:
            # One broken benchmark file must not stop the others: its collection error is
            # reported (and fails the run), the rest still run.
            session.config.option.continue_on_collection_errors = True
        if session.config.option.collectonly:
            return
        if self.benchmark_files:
            self.frozen = gcfreeze.freeze()  # so does the collected suite
        if is_worker(session.config):
            return
        if self._service is not None:  # started during collection: keep only what was selected
            self._service.cancel_pending(keep={item.nodeid for item in session.items})
        self.schedule(session.items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        if is_worker(self.config):
            self.schedule([item, *queued_on_worker(self.config, item.session)])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if not self.benchmark_files:
            return report  # not a benchmark item, and nodes.py (pydantic, yaml) stays unimported
        from ..reporting.failures import JudgeErrored
        from ..reporting.junit import junit_properties
        from .records import case_record, failure_travels

        if call.excinfo is not None and call.when == "setup" and call.excinfo.errisinstance(JudgeErrored):
            report.longrepr = item.repr_failure(call.excinfo)  # pytest shows setup errors as tracebacks
        failure_travels(report)
        record = case_record(item, report)
        if record is not None:
            report.llmjudge = asdict(record)  # type: ignore[attr-defined]
            for name, value in junit_properties(record):
                item.user_properties.append((name, value))
        return report

    @pytest.hookimpl(tryfirst=True)  # before --junitxml reads the failure
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if hasattr(report, "llmjudge_failure"):
            from .records import failure_arrived

            failure_arrived(report)
        data = getattr(report, "llmjudge", None)
        if data is not None:
            from ..gating.records import CaseRecord

            self.records.append(CaseRecord.from_dict(data))
        if report.failed:
            self.failed_nodeids.add(report.nodeid)

    def pytest_runtest_logfinish(self) -> None:
        session = self.session
        if self._service is not None and session is not None and (session.shouldfail or session.shouldstop):
            self._service.cancel_pending()  # -x / --maxfail: pending judge calls are not needed

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The gates, before ``--junitxml`` writes its file (the exit status is decided last)."""
        if is_worker(self.config) or not self.records:
            return
        from ..gating.calibration_run import CALIBRATION_FOLDER, apply_calibration, calibrate, gated_records
        from ..gating.gates import benchmark_gates, rubric_gates
        from .junit_gates import add_gates
        from .outputs import write_review
        from .run_results import release_gates

        self.calibrations = calibrate(self.records, self.config.rootpath / CALIBRATION_FOLDER)
        # each record carries its benchmark's case count: an xdist controller collects nothing
        counts = {r.benchmark: r.benchmark_cases for r in self.records}
        gates = benchmark_gates(gated_records(self.records), counts)
        self.benchmark_results = apply_calibration(release_gates(self, gates), self.calibrations)
        rubrics, self.rubric_errors = rubric_files_as_errors(
            self.config, set(self.codes), self.parent_rubrics
        )
        self.rubric_results = rubric_gates(rubrics, self.benchmark_results)
        write_review(self)  # a review file that cannot be written is a red line, not a traceback
        add_gates(self.config, self.benchmark_results, self.rubric_results)

    @pytest.hookimpl(trylast=True, specname="pytest_sessionfinish")
    def pytest_sessionfinish_exit_status(self, session: pytest.Session) -> None:
        """After syrupy's session finish, which the exit status also follows."""
        from .report_index import index_teardown_reports

        index_teardown_reports(self.config.pluginmanager.get_plugin("terminalreporter"))
        self.close()
        if is_worker(self.config) or not self.records:
            return
        from ..gating.exit_status import decide_exit
        from .run_results import write_run_results

        decision = decide_exit(
            int(session.exitstatus),
            benchmarks=self.benchmark_results,
            rubrics=self.rubric_results,
            broken=bool(self.collect_failures or self.rubric_errors),
            snapshot_failed=_syrupy_failed(self.config),
            failed_nodeids=self.failed_nodeids,
            records=self.records,
        )
        self.tolerated_failures = decision.tolerated
        self.exit_reasons = decision.reasons
        session.exitstatus = decision.status
        write_run_results(self, session)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        write_summary(self, terminalreporter)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        write_closing_exit_line(self)


def write_summary(state: RunState, terminalreporter: Any) -> None:
    """The run's gate tables, judge line, review list, statistics and exit reasons (those of a run
    that exits 0 although items failed come after pytest's final line: ``write_closing_exit_line``)."""
    if not state.benchmark_results:
        return  # a session without benchmarks imports none of this
    from ..reporting.summary import GateSummary, Stats, exit_lines, shorten

    write = terminalreporter.write_line
    terminalreporter.section("llmjudge gates")
    for line in GateSummary(state.benchmark_results, state.rubric_results).lines:
        write(line)
    from ..gating.calibration_run import calibration_summary

    for line in calibration_summary(state.calibrations):
        write(line)
    write_errors = state._service.cache_write_errors if state._service else []
    write("")
    write(Stats.from_records(state.records, write_errors).line())
    for line in (state._service.judges.local_lines if state._service else {}).values():
        write(line)
    review = [r for r in state.records if r.uncertain]
    if review:
        write(f"needs human review ({len(review)}, listed in {state.settings.review_file}):", yellow=True)
        for r in review:
            write(f"  {r.benchmark}::{r.case} at {r.location}: {shorten(r.reason)}")
    from .run_results import summary_lines

    for line, markup in summary_lines(state):
        write(line, **markup)
    status = _decided_status(state)
    if _failures_tolerated(state):
        return  # pytest's final line, below, counts the failures in red: the exit line follows it
    for line in exit_lines(status, state.exit_reasons):
        write(line, red=status != 0, green=status == 0)


def write_closing_exit_line(state: RunState) -> None:
    """A run that exits 0 although items failed ends on its exit decision, after pytest's red final
    line (``N failed, M passed``): the controller's terminal only, once the session is over."""
    reporter = state.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or is_worker(state.config) or not _failures_tolerated(state):
        return
    from ..reporting.summary import closing_exit_line

    reporter.write_line(closing_exit_line(_decided_status(state), state.exit_reasons), green=True)


def _decided_status(state: RunState) -> int:
    return int(state.session.exitstatus) if state.session is not None else 0


def _failures_tolerated(state: RunState) -> bool:
    """The run exits 0 though items failed (each within its benchmark's gate), so pytest's final
    line is red. False once something else (``--max-warnings``) has made the exit status non-zero."""
    return bool(state.benchmark_results and state.failed_nodeids) and _decided_status(state) == 0


def rubric_files_as_errors(
    config: pytest.Config, codes: set[str], parent_rubrics: dict[str, tuple[str, Any]]
) -> tuple[list[Any], list[str]]:
    """The run's rubrics; files that do not load, and references to benchmarks or rubrics that
    do not exist, are reported as collection errors (``ERROR collecting <file>``)."""
    from ..gating.gates import reference_errors

    rubrics, failures = rubric_files(config)
    listed = {member for rubric in rubrics for member in rubric.spec.benchmarks}
    if not listed <= codes:  # only then read the benchmark files this run did not collect
        codes = suite_codes(config) | codes
    failures += [(e.location.path, e.render()) for e in reference_errors(rubrics, codes, parent_rubrics)]
    for path, text in failures:
        report = pytest.CollectReport(path, "failed", text, [])
        config.hook.pytest_collectreport(report=report)
    return [r.spec for r in rubrics], [text for _, text in failures]


def import_report_modules() -> None:
    """Import what each case's report needs before any judge call starts. Imported on the first
    report, it would run just as the first verdict arrives, when a Ctrl-C is most likely; and a
    Ctrl-C inside the source an import exec()s (the methods of a dataclass) makes ``python -m
    pytest`` exit by SIGINT even though pytest handled it (CPython keeps it as unhandled)."""
    from ..reporting import failures, junit  # noqa: F401
    from . import records  # noqa: F401


def status_line(config: pytest.Config) -> StatusLine | None:
    """A live status line while items wait for verdicts: interactive terminals only."""
    import os
    import sys

    from ..reporting.status_line import StatusLine, wanted

    stream = sys.stdout
    verbosity = int(config.get_verbosity())
    if not wanted(stream.isatty(), os.environ, verbosity, is_worker(config)):
        return None
    writer = config.get_terminal_writer()
    capture = config.pluginmanager.get_plugin("capturemanager")
    guard = capture.global_and_fixture_disabled if capture is not None else None
    return StatusLine(stream, lambda: writer.width_of_current_line, lambda: writer.fullwidth, guard)


def load_rubrics(config: pytest.Config) -> tuple[list[Any], list[str]]:
    """The rubric files of the run (ini ``llmjudge_rubrics``), and errors of those that don't load."""
    rubrics, failures = rubric_files(config)
    return [r.spec for r in rubrics], [text for _, text in failures]


def rubric_files(config: pytest.Config) -> tuple[list[Any], list[tuple[str, str]]]:
    """The loaded rubric files (``suite.files.Rubric``) and (display path, error) of the others."""
    from ..suite.errors import SpecError, display_path
    from ..suite.files import load_rubric

    folder = config.rootpath / str(config.getini("llmjudge_rubrics"))
    if not folder.is_dir():
        return [], []
    rubrics, errors = [], []
    for path in sorted(folder.rglob("*.y*ml")):
        display = display_path(path, config.rootpath)
        try:
            rubrics.append(load_rubric(path, display))
        except SpecError as error:
            errors.append((display, error.render()))
    return rubrics, errors


_NOT_SUITE = {"node_modules", "site-packages", "venv"}


def suite_codes(config: pytest.Config) -> set[str]:
    """The codes of every benchmark file below the rootdir's benchmark folders (read, not parsed:
    a rubric may list benchmarks this run did not collect)."""
    import os
    import re
    from pathlib import Path

    from ..suite.detect import is_benchmark_file

    folders = list(config.getini("llmjudge_paths"))
    codes = set()
    for top, dirs, names in os.walk(config.rootpath):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_")) and d not in _NOT_SUITE]
        for name in names:
            path = Path(top) / name
            if not is_benchmark_file(path, folders, config.rootpath):
                continue
            try:
                found = re.search(r"^code:\s*['\"]?([^\s'\"#]+)", path.read_text(encoding="utf-8"), re.M)
            except (OSError, UnicodeDecodeError):
                continue
            codes.add(found.group(1) if found else path.stem)
    return codes


def _syrupy_failed(config: pytest.Config) -> bool:
    syrupy_session = getattr(config, "_syrupy", None)
    report = getattr(syrupy_session, "report", None)
    if report is None:
        return False
    unused_fail = not (config.option.warn_unused_snapshots or config.option.update_snapshots)
    return bool(getattr(report, "num_failed", 0)) or (bool(getattr(report, "num_unused", 0)) and unused_fail)
