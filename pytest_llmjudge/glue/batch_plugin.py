"""``--llmjudge-batch``: at the end of a run, the judge requests still waiting for their batches
(``submit``, or a wait that ran out), and how to collect them."""

from __future__ import annotations

from typing import Any

import pytest

from ..models.pending_batches import PENDING_FOLDER, PendingStore, pending_reason


class BatchPlugin:
    """Says what a batched run left pending; such a run decided nothing, so it never exits 0."""

    def __init__(self, config: pytest.Config) -> None:
        self.store = PendingStore(config.rootpath / PENDING_FOLDER)
        self.reason: str | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.reason = pending_reason(self.store)
        if self.reason is not None and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.reason is not None:
            terminalreporter.write_line(self.reason, yellow=True, bold=True)


def register_batch_plugin(config: pytest.Config, mode: str) -> None:
    """Registers the plugin for a batched run (any ``--llmjudge-batch`` but ``off``)."""
    if mode != "off":
        config.pluginmanager.register(BatchPlugin(config), "llmjudge-batch")
