"""The task step, run by pytest: a benchmark's cases get their outputs from a task, which are
cached and judged, and a broken task is an ERROR of its case, never a FAIL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Suite

TASK_BENCHMARK = """\
code: T1
concept: The output repeats the narrative.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
task: app.produce:run
task_version: "{version}"
cases:
  - {{id: c0, source_narrative: alpha}}
  - {{id: c1, source_narrative: beta}}
  - {{id: c2, source_narrative: gamma}}
"""

# The system under test: logs each call, and raises for the narrative "boom".
APP = """\
from pathlib import Path

CALLS = Path(__file__).parent.parent / "task_calls.log"
SUFFIX = "{suffix}"


def run(case):
    with CALLS.open("a") as log:
        log.write(case.id + "\\n")
    if case.source_narrative == "boom":
        raise ValueError("the product broke")
    return {{"echo": case.source_narrative + SUFFIX, "saw_truth": case.ground_truth}}
"""


def write_task_suite(suite: Suite, version: str = "1", suffix: str = "") -> None:
    suite.write("app/__init__.py", "")
    suite.write("app/produce.py", APP.format(suffix=suffix))
    suite.benchmark("T1", TASK_BENCHMARK.format(version=version))


def task_calls(suite: Suite) -> list[str]:
    log = suite.root / "task_calls.log"
    return log.read_text().splitlines() if log.exists() else []


def results(suite: Suite) -> dict:
    return json.loads((suite.root / "r.json").read_text())


def test_outputs_come_from_the_task_and_a_rerun_calls_neither_task_nor_judge(suite: Suite) -> None:
    write_task_suite(suite)
    first = suite.run("benchmarks", "--llmjudge-results=r.json")
    first.assert_outcomes(passed=4)  # the prompt item and three cases
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]
    assert len(suite.judge_calls()) == 3
    assert any("alpha" in line for line in suite.judge_calls())  # the judge saw the produced output
    cases = {c["id"]: c for c in results(suite)["benchmarks"][0]["cases"]}
    produced = cases["c0"]["produced"]
    assert produced["source"] == "task" and produced["output"] == {"echo": "alpha", "saw_truth": None}
    assert produced["task"] == "app.produce:run@1" and produced["latency"] >= 0
    again = suite.run("benchmarks", "--llmjudge-results=r.json")
    again.assert_outcomes(passed=4)
    assert len(task_calls(suite)) == 3 and len(suite.judge_calls()) == 3  # no new call
    assert results(suite)["benchmarks"][0]["cases"][0]["produced"]["source"] == "task cache"


def test_a_bumped_task_version_regenerates_and_rejudges_only_changed_outputs(suite: Suite) -> None:
    write_task_suite(suite)
    suite.run("benchmarks").assert_outcomes(passed=4)
    write_task_suite(suite, version="2")  # same outputs from a new version
    suite.run("benchmarks").assert_outcomes(passed=4)
    assert len(task_calls(suite)) == 6 and len(suite.judge_calls()) == 3  # regenerated, not rejudged
    write_task_suite(suite, version="3", suffix=" FAIL")  # a version whose outputs changed
    suite.run("benchmarks").assert_outcomes(passed=1, failed=3)
    assert len(task_calls(suite)) == 9 and len(suite.judge_calls()) == 6


def test_a_task_that_raises_errors_its_case_and_the_others_are_judged(suite: Suite) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().replace("source_narrative: beta", "source_narrative: boom"))
    result = suite.run("benchmarks", "-rE")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*task ERROR (task-error)*app.produce:run@1 raised ValueError: the product broke*"])
    assert len(suite.judge_calls()) == 2


def test_ground_truth_is_withheld_unless_the_task_asks_for_it(suite: Suite) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    text = path.read_text().replace("{id: c0, source_narrative: alpha}", "{id: c0, source_narrative: alpha, ground_truth: A}")
    path.write_text(text)
    suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "c0")
    assert results(suite)["benchmarks"][0]["cases"][0]["produced"]["output"]["saw_truth"] is None
    path.write_text(text + "task_sees_ground_truth: true\n")
    suite.run("benchmarks", "--llmjudge-results=r.json", "-k", "c0")
    assert results(suite)["benchmarks"][0]["cases"][0]["produced"]["output"]["saw_truth"] == "A"


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ("app.missing:run", "*T1.yaml:5:*task: cannot import 'app.missing'*"),
        ("app.produce:nothing", "*T1.yaml:5:*task: module 'app.produce' has no attribute 'nothing'*"),
        ("app.produce:SUFFIX", "*T1.yaml:5:*task: app.produce:SUFFIX is a str, not callable*"),
    ],
)
def test_a_task_that_cannot_be_used_is_a_collection_error_at_its_line(
    suite: Suite, task: str, message: str
) -> None:
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().replace("app.produce:run", task))
    result = suite.run("benchmarks")
    assert result.ret == pytest.ExitCode.INTERRUPTED or result.ret == 1
    result.stdout.fnmatch_lines([message])


def test_a_benchmark_with_neither_outputs_nor_a_task_says_so_at_its_code_line(suite: Suite) -> None:
    suite.benchmark(
        "T2",
        """\
        code: T2
        concept: c
        inclusion_criteria: Apply when there is output. Flag if it is wrong.
        cases:
          - {id: c0, source_narrative: alpha}
        """,
    )
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines(["*T2.yaml:1:*task: T2 has cases without candidate_output (c0) and no task*"])


def test_the_run_wide_task_serves_benchmarks_without_their_own(suite: Suite) -> None:
    write_task_suite(suite)
    path: Path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text().replace("task: app.produce:run\n", ""))
    suite.run("benchmarks", "--llmjudge-task=app.produce:run").assert_outcomes(passed=4)
    assert sorted(task_calls(suite)) == ["c0", "c1", "c2"]
