"""The run's plugins, one per concern: collection (``collection_plugin``), judging
(``judging_plugin``), gates and exit status (``gating_plugin``) and reporting
(``reporting_plugin``), registered by ``start_run``. Each plugin's hooks hand off in a line or
three; decisions live in the pure packages. Nodes see the run through ``Host`` (a
``stash.RunHost``), which hands each request to the plugin that owns it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..suite.settings import RunSettings, prompt_style_for
from . import gcfreeze
from .collection_plugin import CollectionPlugin
from .judging_plugin import JudgingPlugin
from .run import Run

if TYPE_CHECKING:
    from ..pipeline.service import JudgingService
    from ..suite.files import Benchmark


class Host:
    """What benchmark nodes and items ask of the run."""

    def __init__(self, run: Run, collection: CollectionPlugin, judging: JudgingPlugin) -> None:
        self.run = run
        self.collection = collection
        self.judging = judging
        gcfreeze.opened(self)

    @property
    def settings(self) -> RunSettings:
        return self.run.settings

    @property
    def parent_rubrics(self) -> dict[str, tuple[str, Any]]:
        return self.run.parent_rubrics

    @property
    def service(self) -> JudgingService:
        """The judging service (``plugin.pytest_configure`` starts an xdist controller's server)."""
        return self.judging.service

    def benchmark_file_collected(self, nodeid: str) -> None:
        self.collection.benchmark_file_collected(nodeid)

    def benchmark_loaded(self, nodeid: str, benchmark: Benchmark) -> None:
        self.collection.benchmark_loaded(nodeid, benchmark)

    def claim_code(self, benchmark: Benchmark) -> None:
        self.collection.claim_code(benchmark)

    def prompt_style(self, benchmark: Benchmark) -> str:
        return prompt_style_for(benchmark, self.run.settings)

    def start_early(self, items: list[pytest.Item]) -> None:
        self.judging.start_early(items)

    def outcome(self, item: Any) -> Any:
        return self.judging.outcome(item)

    def produced(self, nodeid: str) -> tuple[Any, Any]:
        return self.judging.produced(nodeid)

    def pairwise(self, item: Any) -> Any:
        return self.judging.pairwise(item)

    def overspent(self) -> str | None:
        """``over budget: …`` when the run's calls spent past its budget, asked of the process that
        holds it (this one, or an xdist controller); None without a budget, or within it."""
        settings = self.run.settings
        if settings.budget is None and settings.budget_tokens is None:
            return None
        return self.service.spending.overspent()

    def pairwise_items(self, node: Any, requests: dict[str, Any], style: str) -> Any:
        """A pairwise benchmark's prompt requests and case items; None for other benchmarks."""
        own = node.benchmark.spec.judge
        if not self.run.settings.pairwise and not (own and own.mode):
            return None  # nothing pairwise to import
        from .pairwise_items import pairwise_case_items

        return pairwise_case_items(node, requests, style)

    def close(self) -> None:
        gcfreeze.closed(self, self.run.frozen, self.run.gc_paused)
        self.run.frozen = self.run.gc_paused = False
        self.judging.close()


def start_run(config: pytest.Config, settings: RunSettings) -> Host:
    """The run of ``config`` with its four plugins registered."""
    from . import snapshots
    from .batch_plugin import register_batch_plugin
    from .gating_plugin import GatingPlugin
    from .progress_plugin import ProgressPlugin
    from .reporting_plugin import ReportingPlugin

    run = Run(config, settings)
    snapshots.register(config)  # keeps the snapshots of what a run did not check
    host = Host(run, CollectionPlugin(run), JudgingPlugin(run))
    plugins = {
        "llmjudge-collection": host.collection,
        "llmjudge-session": host.judging,
        "llmjudge-gating": GatingPlugin(run, host.close),
        "llmjudge-reporting": ReportingPlugin(run, host.judging),
        "llmjudge-progress": ProgressPlugin(run),  # progress lines in CI logs
    }
    # what a batched run left pending: registered first, so its first session-finish hook runs
    # after the gating plugin's (which decides the verdict) and before --junitxml writes its file
    register_batch_plugin(config, settings.batch)
    for name, plugin in plugins.items():
        config.pluginmanager.register(plugin, name)
    return host
