"""The HTML report of a pairwise run: both outputs side by side, both judgments, an outcome filter."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Suite
from reporting.conftest import OpenedReport, browser, open_report  # noqa: F401  (fixtures)

from pytest_llmjudge.reporting.html import render_report
from pytest_llmjudge.reporting.results_file import load_results

from .test_pairwise_run import mixed_suite, pairs  # noqa: F401  (fixture)

ROWS = (
    """() => [...document.querySelectorAll("section.bench tr.case")].map(row => row.cells[1].textContent)"""
)


@pytest.fixture
def pairwise_results(pairs: Suite) -> dict[str, Any]:  # noqa: F811
    mixed_suite(pairs)
    pairs.run("--llmjudge-pairwise", "--llmjudge-results", "run.json", "--llmjudge-html", "run.html")
    assert (pairs.root / "run.html").is_file()
    return load_results(pairs.root / "run.json")


def test_the_report_has_a_pairwise_table_and_an_outcome_filter(pairwise_results: dict[str, Any]) -> None:
    page = render_report(pairwise_results)
    assert '<section id="pairwise">' in page and 'href="#pairwise"' in page
    assert '<select name="outcome">' in page
    data = json.loads(page.split('<script type="application/json" id="data">')[1].split("</script>")[0])
    (bench,) = data["benchmarks"]
    loss = next(c for c in bench["cases"] if c["id"] == "loss-1")["pairwise"]
    assert (loss["candidate"], loss["baseline"], loss["kinds"]) == ("plain four", "BETTER four", ["loss"])
    assert [a["line"] for a in loss["answers"]] == [
        "candidate was A: B won (the baseline) — output B is preferred",
        "candidate was B: A won (the baseline) — output A is preferred",
    ]
    same = next(c for c in bench["cases"] if c["id"] == "same")["pairwise"]
    assert same["kinds"] == ["tie", "identical"] and same["answers"] == []


def filtered(opened: OpenedReport, outcome: str) -> list[str]:
    opened.page.select_option("select[name=outcome]", outcome)
    return sorted(opened.page.evaluate(ROWS))


def test_the_outcome_filter_and_the_side_by_side_outputs_in_a_browser(
    open_report: Any,  # noqa: F811
    pairwise_results: dict[str, Any],
) -> None:
    opened = open_report(pairwise_results)
    assert opened.problems == []
    assert filtered(opened, "loss") == ["loss-1", "loss-2"]
    assert filtered(opened, "inconsistent") == ["biased-1", "biased-2"]
    assert filtered(opened, "tie") == ["same"]
    assert filtered(opened, "identical") == ["same"]
    assert filtered(opened, "unpaired") == ["alone"]
    assert filtered(opened, "win") == ["win-1", "win-2", "win-3"]
    assert filtered(opened, "loss") == ["loss-1", "loss-2"]
    opened.page.locator("tr.case button.toggle").first.click()
    sides = opened.page.locator("tr.detail .pair pre").all_text_contents()
    assert sorted(sides) == ["BETTER four", "plain four"]
    answers = opened.page.locator("tr.detail ul.answers li").all_text_contents()
    assert len(answers) == 2 and answers[0].startswith("candidate was A: B won (the baseline)")
    assert filtered(opened, "") == sorted(c["id"] for c in pairwise_results["benchmarks"][0]["cases"])
