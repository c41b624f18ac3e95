"""Gates that say what they measured, exit statuses that say why, and output people can read."""

from __future__ import annotations

import json

import pytest
import scipy.stats  # noqa: F401  (gate statistics import them in pytester runs: load them once)
import statsmodels.stats.proportion  # noqa: F401

from tests.test_judging import bench, gate_row, junit, project, run, write

__all__ = ["project"]  # the fixture, shared with test_judging

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")


def review_cases(pytester: pytest.Pytester) -> list[str]:
    data = json.loads((pytester.path / ".llmjudge/review.json").read_text())
    return [f"{c['benchmark']}::{c['case']}" for c in data["cases"]]


def test_partial_run_updates_only_its_entries_in_the_review_file(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "UNCERTAIN", "UNCERTAIN"])})
    write(project, {"benchmarks/B2.yaml": bench("B2", ["UNCERTAIN"])})
    run(project)
    assert review_cases(project) == ["B1::c1", "B1::c2", "B2::c0"]
    run(project, "-k", "B2")
    assert review_cases(project) == ["B1::c1", "B1::c2", "B2::c0"]
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "PASS", "UNCERTAIN"])})
    run(project, "-k", "B1 and c1")  # c1 is decided now: only its entry goes
    assert review_cases(project) == ["B1::c2", "B2::c0"]


def test_partial_selection_makes_a_partial_gate_that_does_not_decide_the_exit(
    project: pytest.Pytester,
) -> None:
    # 3 of 4 pass: the gate at 0.75 passes on the full run
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "PASS", "PASS", "FAIL"], threshold=0.75)})
    assert run(project).ret == 0
    result = project.runpytest_inprocess(
        "benchmarks/B1.yaml::B1::c3", "-p", "no:syrupy", "-p", "no:cacheprovider"
    )
    row = gate_row(result, "B1")
    assert "partial" in row and "1 of 4 cases" in row
    assert "0%" in row  # computed from the selected case
    assert result.ret == 1  # the failing case decides, not a gate computed from 1 case
    result = run(project, "-k", "c0 or c1")
    assert "partial" in gate_row(result, "B1")
    assert result.ret == 0


def test_under_xdist_a_partial_selection_is_a_partial_gate(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "PASS", "PASS", "FAIL"], threshold=0.75)})
    result = run(project, "-n", "2", "-k", "c3")
    row = gate_row(result, "B1")
    assert "partial" in row and "1 of 4 cases" in row
    assert result.ret == 1  # the failing case decides


def test_under_xdist_failures_carry_their_reason_in_the_short_summary_and_junit(
    project: pytest.Pytester,
) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=0.5)})
    result = run(project, "-n", "2", "-rf", "--junitxml=out.xml")
    result.stdout.fnmatch_lines(["FAILED benchmarks/B1.yaml::B1::c1 - FAIL: judged fail on the evidence*"])
    failure = junit(project)["c1"].find("failure")
    assert failure is not None and failure.get("message", "").startswith("FAIL: judged fail on the evidence")
    assert "reason: judged fail on the evidence" in (failure.text or "")


RUBRIC = """\
code: R
label: Rubric
aggregation_method: {method}
passing_threshold: 0.5
benchmarks:
  - B1
  - B9
"""


def test_rubric_file_errors_are_collection_errors(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS"], threshold=0.5)})
    write(project, {"rubrics/R.yaml": RUBRIC.format(method="AVERAGE").replace("  - B9\n", "")})
    result = run(project)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting rubrics/R.yaml*",
            "rubrics/R.yaml:3:*aggregation_method*",
            "*short test summary info*",
            "ERROR rubrics/R.yaml*",
            "*2 passed, 1 error*",
        ]
    )
    assert result.ret == 1


def test_rubric_and_parent_rubric_references_must_exist(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS"], threshold=0.5, parent_rubric="Q")})
    write(project, {"benchmarks/B2.yaml": bench("B2", ["PASS"], threshold=0.5, parent_rubric="R")})
    write(project, {"rubrics/R.yaml": RUBRIC.format(method="MEAN")})
    result = project.runpytest_inprocess("benchmarks/B1.yaml", "-p", "no:syrupy", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "rubrics/R.yaml:7:5: benchmarks[1]: no benchmark 'B9' in the suite" in out
    assert "benchmarks/B1.yaml:6:1: parent_rubric: no rubric 'Q'" in out
    assert "benchmarks/B2.yaml:6:1: parent_rubric: rubric 'R' does not list B2" not in out  # not run
    assert "no benchmark 'B2'" not in out  # B2 exists, though this run did not collect it
    assert result.ret == 1


def test_rubric_guidelines_may_hold_special_instructions(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS"], threshold=0.5)})
    rubric = RUBRIC.format(method="MEAN").replace("  - B9\n", "")
    rubric += "evaluation_guidelines:\n  focus_areas: [dose]\n  special_instructions: Read the chart first.\n"
    write(project, {"rubrics/R.yaml": rubric})
    result = run(project)
    assert "PASS" in gate_row(result, "R")
    assert result.ret == 0


def test_yaml_file_outside_the_benchmark_folders_says_how_to_collect_it(project: pytest.Pytester) -> None:
    write(project, {"evals/B1.yaml": bench("B1", ["PASS"])})
    result = project.runpytest_inprocess("evals/B1.yaml", "-p", "no:syrupy", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["evals/B1.yaml: not collected: *llmjudge_paths (now: benchmarks)"])
    project.makeini("[pytest]\nllmjudge_paths = evals\n")
    result = project.runpytest_inprocess("evals/B1.yaml", "-p", "no:syrupy", "-p", "no:cacheprovider")
    assert "not collected" not in result.stdout.str()
    result.assert_outcomes(passed=2)


LONG_REASON_JUDGE = """
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

def judge(messages, info):
    reason = "the dose is wrong " * 30 + "END"
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"pass": False, "reason": reason})])

def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="long-judge")
"""


def test_failure_lines_carry_the_reason_cut_in_the_terminal_whole_in_junit(
    pytester: pytest.Pytester,
) -> None:
    import xml.etree.ElementTree as ET

    pytester.makeconftest(LONG_REASON_JUDGE)
    write(pytester, {"benchmarks/B1.yaml": bench("B1", ["x"], threshold=0.5)})
    result = run(pytester, "--junitxml=out.xml", "-rf")
    out = result.stdout.str()
    assert "FAILED benchmarks/B1.yaml::B1::c0 - FAIL: the dose is wrong" in out
    assert "END" not in out and "…" in out
    failure = next(ET.parse(pytester.path / "out.xml").getroot().iter("failure"))
    assert failure.get("message", "").startswith("FAIL: the dose is wrong")
    assert "END" in (failure.text or "")


def test_bad_model_of_one_benchmark_is_an_error_of_its_cases_at_its_line(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS"], judge={"model": "opnai:gpt-4o"})})
    write(project, {"benchmarks/B2.yaml": bench("B2", ["PASS"], threshold=0.5)})
    result = run(project)
    out = result.stdout.str()
    assert "benchmarks/B1.yaml:5:" in out and "judge.model:" in out and "opnai" in out
    result.assert_outcomes(passed=3, errors=1)  # B2 still ran
    assert result.ret == 1


def test_refused_connection_is_reported_at_once_with_its_url(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    import pydantic_ai.models

    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # to a closed local port
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    write(pytester, {"benchmarks/B1.yaml": bench("B1", ["PASS"])})
    started = time.monotonic()
    result = run(pytester, "--llmjudge-model=openai:x", "--llmjudge-base-url=http://127.0.0.1:9/v1")
    assert time.monotonic() - started < 20
    out = result.stdout.str()
    assert "judge ERROR (connection-refused) after 1 attempt: connection refused by http://127.0.0.1:9" in out
