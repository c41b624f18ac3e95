"""Output capture of case items: a case is captured only while it waits for its verdict, so a
judged run does not pay pytest's capture round trips three times per case; what a judge prints
meanwhile is still captured into the waiting case's report, never written across the terminal."""

from __future__ import annotations

import pytest
from conftest import JUDGE_CONFTEST, Suite

CASES = 12

BENCHMARK = "code: C1\nconcept: The output says hello.\nthreshold: 0.5\n" + (
    "inclusion_criteria: Apply when there is output. Flag if it does not say hello.\ncases:\n"
)

# Counts how often pytest's capture manager resumes the process's capture, from the first
# case item's setup to the end of the run.
COUNTING = """
import pytest

COUNT = {"resumes": 0, "counting": False}


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    capture = config.pluginmanager.get_plugin("capturemanager")
    resume = capture.resume_global_capture

    def counted():
        COUNT["resumes"] += COUNT["counting"]
        resume()

    capture.resume_global_capture = counted


def pytest_runtest_logstart(nodeid):
    COUNT["counting"] = COUNT["counting"] or "::case-" in nodeid


def pytest_sessionfinish(session):
    (session.config.rootpath / "resumes.txt").write_text(str(COUNT["resumes"]))
"""

# A judge that prints, in the scheduler's thread, while the only case waits for it.
PRINTING = """
import time

_judge = judge


def judge(messages, info):
    time.sleep(0.5)
    print("the judge was here")
    return _judge(messages, info)
"""


def test_each_case_resumes_the_output_capture_once(suite: Suite) -> None:
    cases = "".join(f"  - {{id: case-{n}, candidate_output: hello}}\n" for n in range(CASES))
    suite.benchmark("C1", BENCHMARK + cases)
    suite.write("conftest.py", JUDGE_CONFTEST + COUNTING)
    result = suite.pytester.runpytest_subprocess("-p", "no:syrupy", "-p", "no:cacheprovider", "benchmarks")
    result.assert_outcomes(passed=CASES + 1)
    assert int((suite.root / "resumes.txt").read_text()) == CASES  # three per case before


@pytest.mark.parametrize("capture", ["fd", "sys"])
def test_what_a_judge_prints_while_a_case_waits_is_in_that_cases_report(suite: Suite, capture: str) -> None:
    suite.benchmark("C1", BENCHMARK + "  - {id: case-0, candidate_output: FAIL}\n")
    suite.write("conftest.py", JUDGE_CONFTEST + PRINTING)
    result = suite.pytester.runpytest_subprocess(
        "-p", "no:syrupy", "-p", "no:cacheprovider", f"--capture={capture}", "benchmarks"
    )
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    captured = text.index("Captured stdout setup")
    assert text.count("the judge was here") == 1 and text.index("the judge was here") > captured, text
