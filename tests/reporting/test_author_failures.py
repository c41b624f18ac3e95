"""Failures an author can read: the output judged and the expected output come before the reason,
in the terminal (cut short, with a note) and at the top of the report's expanded row."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pytest_llmjudge.reporting.html import case_data
from tests.conftest import Suite

from .conftest import OpenedReport
from .results_factory import make_results

LONG_OUTPUT = "\n".join(f"line {i}: FAIL the answer goes on" for i in range(40))


def _failing_suite(suite: Suite) -> None:
    cases = [
        {"id": "short", "candidate_output": "FAIL: a short answer \x1b[31mred", "ground_truth": "hello"},
        {"id": "long", "candidate_output": LONG_OUTPUT, "ground_truth": {"greeting": "hello", "n": 1}},
    ]
    lines = ["code: AUTH1", "concept: The output says hello.", "threshold: 0", "cases:"]
    lines += [f"  - {json.dumps(case)}" for case in cases]
    suite.benchmark("AUTH1", "\n".join(lines) + "\n")


def test_the_terminal_shows_output_and_expected_before_the_reason(suite: Suite) -> None:
    _failing_suite(suite)
    result = suite.run("--llmjudge-results=run.json")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    after_short = out[out.index("case short at") :]
    short = after_short[: after_short.index("model:")].splitlines()
    assert short[1:7] == [
        "output judged:",
        "  FAIL: a short answer \\x1b[31mred",  # a terminal escape is shown, not obeyed
        "expected output:",
        "  hello",
        "verdict: FAIL",
        "reason: the candidate output is marked FAIL",
    ]
    after_long = out[out.index("case long at") :]
    long = after_long[: after_long.index("verdict: FAIL")].splitlines()
    assert long[1:10] == ["output judged:", *[f"  line {i}: FAIL the answer goes on" for i in range(8)]]
    shown = len("\n".join(LONG_OUTPUT.splitlines()[:8]))
    assert long[10] == (
        f"  … cut: {shown} of {len(LONG_OUTPUT):,} characters shown "
        "(the whole text: the results file and the HTML report)"
    )
    assert long[11:] == ["expected output:", "  {", '    "greeting": "hello",', '    "n": 1', "  }"]
    assert "line 8:" not in out


def test_the_report_data_carries_the_expected_output_as_written(suite: Suite) -> None:
    _failing_suite(suite)
    suite.run("--llmjudge-results=run.json")
    data = json.loads((suite.root / "run.json").read_text())
    cases = {c["id"]: c for c in case_data(data)["benchmarks"][0]["cases"]}
    assert cases["short"]["expected"] == "hello"
    assert json.loads(cases["long"]["expected"]) == {"greeting": "hello", "n": 1}
    assert cases["long"]["produced"] == {"source": "from the case file", "output": LONG_OUTPUT}


def test_the_expanded_row_starts_with_output_and_expected(open_report: Callable[..., OpenedReport]) -> None:
    results: dict[str, Any] = make_results(3)
    opened = open_report(results)
    table = opened.page.locator("section.bench").first
    row = table.locator("tr.case").first
    code, case_id = table.locator("h3 code").text_content(), row.locator("td").nth(1).text_content()
    (bench,) = [b for b in results["benchmarks"] if b["code"] == code]
    (case,) = [c for c in bench["cases"] if c["id"] == case_id]
    row.locator("button.toggle").click()
    detail = table.locator("tr.detail")
    headings = detail.locator("pre").evaluate_all("nodes => nodes.map(n => n.previousSibling.textContent)")
    texts = detail.locator("pre").all_text_contents()
    assert headings[:3] == ["Output judged (from the case file)", "Expected output", "Reason"]
    assert json.loads(texts[0]) == case["produced"]["output"]
    assert json.loads(texts[1]) == json.loads(case["request"]["expected"])
    assert texts[2] == case["reason"]
    assert headings.index("Reason") < headings.index("Output")  # the compiled request comes after
