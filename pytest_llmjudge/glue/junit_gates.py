"""The run's gates as properties of ``--junitxml``'s testsuite, so CI dashboards show them.

pytest's junitxml plugin writes its file in its own ``pytest_sessionfinish``: the gates are
added to it from the run state's ``tryfirst`` session-finish hook, which computes them first.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from _pytest.junitxml import xml_key

from ..gating.gates import BenchmarkGate, RubricGate, why


def gate_properties(
    benchmarks: Sequence[BenchmarkGate], rubrics: Sequence[RubricGate]
) -> list[tuple[str, str]]:
    """``(llmjudge_gate:A-MED1, FAIL: pass rate 33.3% below 90.0%)``, one per benchmark and rubric."""

    def value(status: str, detail: str) -> str:
        shown = status.upper() if status in {"pass", "fail"} else status
        return f"{shown}: {detail}" if detail else shown

    return [(f"llmjudge_gate:{g.code}", value(g.status, why(g))) for g in benchmarks] + [
        (f"llmjudge_rubric_gate:{g.code}", value(g.status, g.detail)) for g in rubrics
    ]


def add_gates(
    config: pytest.Config, benchmarks: Sequence[BenchmarkGate], rubrics: Sequence[RubricGate]
) -> None:
    """Add the gates to the JUnit XML file this run writes, if it writes one."""
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for name, text in gate_properties(benchmarks, rubrics):
        xml.add_global_property(name, text)
