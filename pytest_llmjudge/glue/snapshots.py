"""syrupy glue: a run never reports (or, with ``--snapshot-update``, deletes) the snapshot of a
compiled judge request it did not check.

syrupy calls a snapshot unused when its item was selected but did not run, and a snapshot file
unused when no collected item owns it. Both happen without any change to the suite: a run with
no judge model (exit 4), one stopped by Ctrl-C or ``-x``, or a benchmark file that fails to load.
Before syrupy settles its report, this plugin tells it, through its session's own bookkeeping
(``collect_items``, ``select_items``, ``ran_item``), that such items were *skipped*: syrupy
keeps the snapshots of skipped items.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

import pytest

_NAME = re.compile(r"^# name: (\S+)$", re.M)


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
