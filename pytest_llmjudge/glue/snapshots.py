"""syrupy glue: a run never reports (or, with ``--snapshot-update``, deletes) the snapshot of a
compiled judge request it did not check.

syrupy calls a snapshot unused when its item was selected but did not run, and a snapshot file
unused when no collected item owns it. Both happen without any change to the suite: a run with
no judge model (exit 4), one stopped by Ctrl-C or ``-x``, or a benchmark file that fails to load.
Before syrupy settles its report, this plugin tells it, through its session's own bookkeeping
(``collect_items``, ``select_items``, ``ran_item``), that such items were *skipped*: syrupy
keeps the snapshots of skipped items.

New snapshots are recorded as Jest records them: outside CI a benchmark whose snapshot does not
exist yet writes it and passes ("snapshot recorded"); in CI (the ``CI`` variable, or
``--llmjudge-ci``) it fails, so a snapshot nobody committed never passes a build. A snapshot that
exists and differs fails everywhere until ``--snapshot-update``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from typing import Any

import pytest

from ..compile.snapshot import ci_from_env

_NAME = re.compile(r"^# name: (\S+)$", re.M)
RECORDED = "llmjudge_snapshot_recorded"  # user property of a prompt item that recorded its snapshot


def in_ci(config: pytest.Config) -> bool:
    """The run is in CI: ``--llmjudge-ci``, or the ``CI`` environment variable."""
    return bool(config.getoption("llmjudge_ci", None)) or ci_from_env(os.environ.get("CI"))


def record_new(snapshot: Any, config: pytest.Config) -> None:
    """Outside CI, let syrupy write ``snapshot`` when it does not exist yet (a changed one still fails)."""
    if not in_ci(config):
        snapshot.update_new_snapshots_only = True


def was_recorded(snapshot: Any) -> bool:
    """The last assertion of ``snapshot`` created it without ``--snapshot-update``."""
    if snapshot.update_snapshots or not snapshot.num_executions:
        return False
    return bool(snapshot.executions[snapshot.num_executions - 1].created)


def compiled_prompt() -> None:
    """What a stand-in for a benchmark's prompt item calls (never run)."""


class _Holder(pytest.Collector):
    """The benchmark node of a stand-in (named like the benchmark whose snapshot it keeps)."""

    def collect(self) -> list[pytest.Item]:  # pragma: no cover - never collected
        return []


class SnapshotGuard:
    """Registered as a pytest plugin by the run state."""

    def __init__(self) -> None:
        self.ran: set[str] = set()
        self.stand_ins: list[pytest.Item] = []
        self.recorded: dict[str, str] = {}  # node id: "A-MED1 in benchmarks/…/A-MED1.ambr"

    def keep_snapshots_of(self, file_node: pytest.File) -> None:
        """``file_node`` did not load: its stored snapshots are kept, named as stored."""
        from syrupy.extensions.amber import AmberSnapshotExtension  # only with syrupy loaded

        folder = file_node.path.parent / str(file_node.config.getoption("snapshot_dirname", "__snapshots__"))
        stored = folder / f"{file_node.path.stem}.{AmberSnapshotExtension.file_extension}"
        try:
            names = _NAME.findall(stored.read_text(encoding="utf-8"))
        except OSError:
            return
        for name in names:
            code, _, item = name.rpartition(".")
            if not code or not item:
                continue
            holder = _Holder.from_parent(file_node, name=code)
            self.stand_ins.append(pytest.Function.from_parent(holder, name=item, callobj=compiled_prompt))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.ran.add(report.nodeid)
        for name, value in report.user_properties:  # from xdist workers too
            if name == RECORDED:
                self.recorded[report.nodeid] = str(value)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.recorded:
            return
        terminalreporter.write_sep("-", "llmjudge snapshots")
        for what in self.recorded.values():
            terminalreporter.write_line(f"snapshot recorded: {what} (new; commit it with the benchmark)")

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        syrupy_session: Any = getattr(session.config, "_syrupy", None)
        if syrupy_session is not None:
            self.mark_skipped(syrupy_session, session.items)
        return (yield)

    def mark_skipped(self, syrupy_session: Any, items: list[pytest.Item]) -> None:
        if self.stand_ins:
            syrupy_session.collect_items(self.stand_ins)
            syrupy_session.select_items(self.stand_ins)
        not_run = [i for i in items if getattr(i, "checks_snapshot", False) and i.nodeid not in self.ran]
        for item in [*not_run, *self.stand_ins]:
            syrupy_session.ran_item(item.nodeid, "skipped")


def guard(config: pytest.Config) -> SnapshotGuard | None:
    plugin = config.pluginmanager.get_plugin("llmjudge-snapshots")
    return plugin if isinstance(plugin, SnapshotGuard) else None


def register(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("syrupy") and not config.pluginmanager.has_plugin("llmjudge-snapshots"):
        config.pluginmanager.register(SnapshotGuard(), "llmjudge-snapshots")
