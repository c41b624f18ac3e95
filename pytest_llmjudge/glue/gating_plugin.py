"""Gates and exit status: the run's verdict (``gating.run_verdict``), decided once its cases have
run, before ``--junitxml`` writes its file; pytest's exit status follows it at the very end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from .selection import is_worker

if TYPE_CHECKING:
    from ..gating.run_verdict import RunGates
    from .run import Run


class GatingPlugin:
    def __init__(self, run: Run, close: Callable[[], None]) -> None:
        self.run = run
        self.close = close  # the judging service and what the run froze, closed at the very end
        self._decided_on = 0  # pytest's exit status when the verdict was decided

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not is_worker(self.run.config) and self.run.records:
            self._decided_on = int(session.exitstatus)
            decide(self.run, self._decided_on)

    @pytest.hookimpl(trylast=True, specname="pytest_sessionfinish")
    def pytest_sessionfinish_exit_status(self, session: pytest.Session) -> None:
        """After every other plugin's session finish: pytest's exit status is the verdict's."""
        from .report_index import index_teardown_reports

        index_teardown_reports(self.run.config.pluginmanager.get_plugin("terminalreporter"))
        self.close()
        if self.run.verdict is not None:
            session.exitstatus = finish(self.run, self._decided_on, int(session.exitstatus))


def decide(run: Run, status: int) -> None:
    """The run's gates and verdict; the review file and the JUnit gate properties from them."""
    from ..gating.run_verdict import decide_run
    from .junit_gates import add_verdict
    from .outputs import write_review
    from .rubric_files import report_errors

    run.gates, run.rubrics = gates_of(run)
    report_errors(run.config, run.rubrics)
    run.verdict = decide_run(
        run.gates,
        status,
        broken=bool(run.collect_failures or run.rubrics.errors),
        snapshot_failed=bool(run.snapshot_failures),
        failed_nodeids=run.failed_nodeids,
        records=run.records,
        over_budget=_overspent(run.config),
    )
    write_review(run)
    add_verdict(run.config, run.verdict)


def gates_of(run: Run) -> tuple[RunGates, RubricFiles]:
    """Every gate of the run, from its records, the calibration store, the baseline and the
    rubric files (each read once)."""
    from ..gating.calibration_run import CALIBRATION_FOLDER, calibrate
    from ..gating.run_verdict import GateSettings, gate_run
    from .rubric_files import load_rubric_files
    from .run_results import rejudged_baseline

    settings = run.settings
    calibrations = calibrate(run.records, run.config.rootpath / CALIBRATION_FOLDER)
    rubrics = load_rubric_files(run.config, set(run.codes), run.parent_rubrics)
    baseline, baseline_error, drift = rejudged_baseline(run)  # drift: --llmjudge-rejudge-baseline
    rule = GateSettings(
        settings.gate, settings.margin, settings.alpha, settings.fail_on, bool(settings.baseline)
    )
    gates = gate_run(
        run.records,
        rule,
        baseline=baseline,
        baseline_error=baseline_error,
        calibrations=calibrations,
        rubrics=rubrics.specs,
    )
    return replace(gates, drift=drift), rubrics


def finish(run: Run, decided_on: int, status_now: int) -> int:
    """The final verdict (another plugin may have failed the session since), the results file."""
    from ..gating.run_verdict import after_other_plugins
    from .run_results import write_run_results

    assert run.verdict is not None
    run.verdict = after_other_plugins(run.verdict, decided_on, status_now)
    write_run_results(run)
    return run.verdict.status


if TYPE_CHECKING:
    from .rubric_files import RubricFiles


def _overspent(config: pytest.Config) -> str | None:
    from .stash import STATE

    host = config.stash.get(STATE, None)
    return None if host is None else host.overspent()
