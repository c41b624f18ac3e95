"""Where the glue keeps the run state: the stash key, and what nodes may ask of the state (so
``nodes`` needs no import of ``run_state``, which imports it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from ..judging.verdict import Outcome
    from ..suite.files import Benchmark
    from ..suite.settings import RunSettings


class RunHost(Protocol):
    """The run state as benchmark nodes and items see it."""

    @property
    def settings(self) -> RunSettings: ...
    @property
    def parent_rubrics(self) -> dict[str, tuple[str, Any]]: ...

    def benchmark_file_collected(self, nodeid: str) -> None: ...
    def benchmark_loaded(self, nodeid: str, benchmark: Benchmark) -> None: ...
    def claim_code(self, benchmark: Benchmark) -> None: ...
    def prompt_style(self, benchmark: Benchmark) -> str: ...
    def start_early(self, items: list[pytest.Item]) -> None: ...
    def outcome(self, item: Any) -> Outcome: ...
    def produced(self, nodeid: str) -> tuple[Any, Any]: ...
    def overspent(self) -> str | None: ...  # ``over budget: …`` past the run's budget, else None
    def pairwise(self, item: Any) -> Any: ...  # a pairwise item's ``pipeline.pairwise_pipeline.PairResult``
    def pairwise_items(self, node: Any, requests: dict[str, Any], style: str) -> Any: ...
    def close(self) -> None: ...


STATE = pytest.StashKey[RunHost]()


def run_host(config: pytest.Config) -> RunHost:
    return config.stash[STATE]
