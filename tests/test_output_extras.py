"""Run output for release managers: gates in JUnit, block-list benchmark files reported, and a
status line as wide as the terminal with an ETA."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager

from conftest import GOOD, Suite

from pytest_llmjudge.execution.scheduler import Progress
from pytest_llmjudge.reporting.status_line import StatusLine, status_text

# -- gates in --junitxml ---------------------------------------------------------------------

HALF_FAILING = """\
code: A-MED1
concept: The output says hello.
threshold: 0.9
cases:
  - {id: a, candidate_output: hello}
  - {id: b, candidate_output: FAIL}
  - {id: c, candidate_output: FAIL}
"""

RUBRIC = """\
code: R-MAIN
label: Main
aggregation_method: MINIMUM
passing_threshold: 0.5
benchmarks: [A-MED1, A-OK1]
"""


def suite_properties(path: object) -> dict[str, str]:
    suite_node = ET.parse(str(path)).getroot().find("testsuite")
    assert suite_node is not None
    return {p.get("name", ""): p.get("value", "") for p in suite_node.iterfind("properties/property")}


def test_junit_xml_carries_the_gate_of_every_benchmark_and_rubric(suite: Suite) -> None:
    suite.benchmark("A-MED1", HALF_FAILING)
    suite.benchmark("A-OK1", GOOD)
    suite.write("rubrics/R-MAIN.yaml", RUBRIC)
    result = suite.run("benchmarks", "--junitxml=out.xml")
    assert result.ret == 1  # the failing gate still decides the exit status
    gates = {k: v for k, v in suite_properties(suite.root / "out.xml").items() if "gate" in k}
    assert gates == {
        "llmjudge_gate:A-MED1": "FAIL: pass rate 33.3% below 90.0%",
        "llmjudge_gate:A-OK1": "PASS",
        "llmjudge_rubric_gate:R-MAIN": "FAIL: score 0.333 below 0.5",
    }


# -- block-style lists in a benchmark folder -------------------------------------------------


def test_a_block_list_of_benchmarks_is_reported_like_a_flow_list(suite: Suite) -> None:
    suite.benchmark("block", "# two benchmarks in one file\n- code: B-ONE\n  concept: c\n- code: B-TWO\n")
    suite.benchmark("flow", "[{code: B-THREE, concept: c}]\n")
    suite.benchmark("A-OK1-cases", "# cases kept beside a benchmark\n- id: x\n  candidate_output: y\n")
    result = suite.run("benchmarks")
    output = result.stdout.str()
    assert "benchmarks/a/block.yaml:2:1: <file>: expected a mapping of fields, got a list" in output
    assert "benchmarks/a/flow.yaml:1:1: <file>: expected a mapping of fields, got a list" in output
    assert "A-OK1-cases" not in output  # a case list is a cases_file target, not a benchmark
    assert result.ret != 0


# -- the status line ---------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_status_line_uses_the_whole_width_of_a_wide_terminal() -> None:
    stream = io.StringIO()
    captured = [True]

    @contextmanager
    def suspend_capture() -> Iterator[None]:
        captured[0] = False
        yield
        captured[0] = True

    # While pytest captures output the terminal's width cannot be read: 80 columns are assumed.
    line = StatusLine(
        stream, column=lambda: 60, width=lambda: 80 if captured[0] else 200, guard=suspend_capture
    )
    progress = Progress(total=1000, done=120, in_flight=32, cache_hits=40, errors=2)
    line.waiting(progress)
    assert "judging 120/1000 · 32 in flight · 848 queued · 40 cached · 2 errors" in stream.getvalue()


def test_the_status_line_shows_an_eta_once_a_few_calls_completed() -> None:
    clock = Clock()
    progress = Progress(total=100, started=clock.now)
    clock.now += 10
    progress.done = 2
    assert "ETA" not in status_text(progress, now=clock.now)  # too few to tell a rate
    progress.done = 20  # 2 calls a second, 80 to go
    assert status_text(progress, now=clock.now).endswith(" · ETA 40s")
    progress.done = 0
    progress.total, progress.done = 10_000, 100  # 10 a second: 990 s to go
    assert status_text(progress, now=clock.now).endswith(" · ETA 16m30s")
