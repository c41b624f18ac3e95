"""Each prompt style's compiled request, exactly as the judge model receives it (syrupy)."""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from pytest_llmjudge.compile.request import STYLES, compile_case
from pytest_llmjudge.compile.sections import sections_for
from pytest_llmjudge.judging.rendering import render_messages
from pytest_llmjudge.suite.files import load_benchmark

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("style", STYLES)
def test_compiled_request_per_style(style: str, snapshot: SnapshotAssertion) -> None:
    path = REPO / "benchmarks/a-component/A-NEG1.yaml"
    benchmark = load_benchmark(path, "benchmarks/a-component/A-NEG1.yaml", REPO)
    request = compile_case(benchmark, sections_for(benchmark, REPO), benchmark.cases[2], style)
    assert render_messages(request) == snapshot


def test_requests_render_while_another_event_loop_runs_in_this_thread() -> None:
    """A browser-testing plugin (playwright) or an async runner may hold a running event loop in
    pytest's main thread: the ``::prompt`` item still renders what the judge is told."""
    import asyncio

    benchmark = load_benchmark(REPO / "benchmarks/a-component/A-MED1.yaml", "A-MED1.yaml", REPO)
    request = compile_case(benchmark, sections_for(benchmark, REPO), benchmark.cases[0], "no_reasoning")

    async def inside_a_loop() -> str:
        return render_messages(request)

    assert "<Output>" in asyncio.run(inside_a_loop())
