"""Batch APIs (``--llmjudge-batch``, ``judge: {batch: true}``): at the end of a run, the judge
and model-task requests still waiting for their batches (``submit``, or a batch wait that ran out), and how to
collect them: a reason of the run's exit status, in the terminal and the results file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..models.pending_batches import PENDING_FOLDER, PendingStore, pending_reason
from .selection import is_worker

if TYPE_CHECKING:
    from ..gating.records import CaseRecord

PENDING_KIND = "batch-pending"  # the ERROR kind of a call that left its request in a batch


class BatchPlugin:
    """Says what the run left pending in batches; such a run decided nothing, so it never exits 0.

    A run with ``--llmjudge-batch`` says so of every request recorded under ``.llmjudge/batches``;
    another (a benchmark's ``judge: {batch: true}``) once one of its cases ended ``batch-pending``.
    """

    def __init__(self, config: pytest.Config, mode: str) -> None:
        self.config, self.mode = config, mode
        self.store = PendingStore(config.rootpath / PENDING_FOLDER)
        self.reason: str | None = None  # said by this plugin: a run with no verdict to carry it

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Right after the verdict (the gating plugin's first hook, registered after this plugin),
        before ``--junitxml`` writes its file and the results file is written (the gating plugin's
        last hook)."""
        if is_worker(self.config):
            return  # the controller says it, once
        from .stash import STATE

        run = getattr(self.config.stash.get(STATE, None), "run", None)
        records = getattr(run, "records", [])
        if self.mode == "off" and not any(left_pending(r) for r in records):
            return
        reason = pending_reason(self.store)
        if reason is None:
            return
        if run is not None and run.verdict is not None:
            from ..reporting.results_merge import with_pending

            run.verdict = with_pending(run.verdict, reason)
            junit_pending(self.config, run.verdict.status, reason)
        else:
            self.reason = reason
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.reason is not None:
            terminalreporter.write_line(self.reason, yellow=True, bold=True)


def junit_pending(config: pytest.Config, status: int, reason: str) -> None:
    """The ``--junitxml`` file's verdict properties (added when the verdict was decided) with the
    pending reason and the exit status it gives."""
    from _pytest.junitxml import xml_key

    from ..gating.run_verdict import NOTHING_FAILED

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    stale = {("llmjudge_exit_reason", NOTHING_FAILED)}
    kept = [p for p in xml.global_properties if p[0] != "llmjudge_exit_status" and p not in stale]
    xml.global_properties = kept
    xml.add_global_property("llmjudge_exit_status", str(status))
    xml.add_global_property("llmjudge_exit_reason", reason)


def left_pending(record: CaseRecord) -> bool:
    """Whether a case (or one of its samples) ended with its request waiting in a batch."""
    errors = [record.reason, *(s.error or "" for s in record.samples)] if record.result == "error" else []
    return any(e.startswith(PENDING_KIND) for e in errors)


def register_batch_plugin(config: pytest.Config, mode: str) -> None:
    """Registers the plugin: ``mode`` is the run's ``--llmjudge-batch`` (a benchmark's
    ``judge.batch`` may batch its calls in any run)."""
    config.pluginmanager.register(BatchPlugin(config, mode), "llmjudge-batch")
