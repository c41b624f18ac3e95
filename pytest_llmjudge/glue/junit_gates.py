"""The run's verdict as properties of ``--junitxml``'s testsuite, so CI dashboards show it: each
gate with its detail, the exit status and its reasons, in the words of the terminal.

pytest's junitxml plugin writes its file in its own ``pytest_sessionfinish``: the verdict is
added to it from the gating plugin's ``tryfirst`` session-finish hook, which decides it first.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from _pytest.junitxml import xml_key

from ..gating.gates import BenchmarkGate, RubricGate, why
from ..gating.run_verdict import RunVerdict


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


def verdict_properties(verdict: RunVerdict) -> list[tuple[str, str]]:
    """The gates, then ``llmjudge_exit_status`` and one ``llmjudge_exit_reason`` per reason."""
    gates = gate_properties(verdict.gates.benchmarks, verdict.gates.rubrics)
    return [*gates, ("llmjudge_exit_status", str(verdict.status))] + [
        ("llmjudge_exit_reason", reason) for reason in verdict.reasons
    ]


def add_verdict(config: pytest.Config, verdict: RunVerdict) -> None:
    """Add the verdict to the JUnit XML file this run writes, if it writes one."""
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for name, text in verdict_properties(verdict):
        xml.add_global_property(name, text)
