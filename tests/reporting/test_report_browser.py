"""The HTML report in a real browser (system Chromium): filters, sorting, paging, escaping, speed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.reporting.html import visible
from pytest_llmjudge.reporting.results_file import disagrees

from .conftest import OpenedReport
from .results_factory import HOSTILE, make_baseline, make_hostile_results, make_results

Opener = Callable[..., OpenedReport]
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "report.png"
RESULT_ORDER = {"fail": 0, "error": 1, "skip": 2, "pass": 3}
ROWS = """() => [...document.querySelectorAll("section.bench")].map(section => ({
  code: section.querySelector("h3 code").textContent,
  rows: [...section.querySelectorAll("tr.case")].map(row => [...row.cells].map(cell => cell.textContent)),
}))"""


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return make_results(120, baseline=make_baseline(120))


def shown(opened: OpenedReport) -> dict[str, list[list[str]]]:
    """Benchmark code → its drawn case rows, each the text of its cells."""
    return {s["code"]: s["rows"] for s in opened.page.evaluate(ROWS)}


def shown_ids(opened: OpenedReport) -> set[tuple[str, str]]:
    return {(code, row[1]) for code, rows in shown(opened).items() for row in rows}


def case_ids(results: dict[str, Any], keep: Callable[[dict[str, Any]], bool]) -> set[tuple[str, str]]:
    return {(b["code"], c["id"]) for b in results["benchmarks"] for c in b["cases"] if keep(c)}


def section(opened: OpenedReport, code: str) -> Any:
    return opened.page.locator("section.bench").filter(has=opened.page.locator("h3 code", has_text=code))


def test_the_report_opens_without_errors_and_draws_every_case(
    open_report: Opener, results: dict[str, Any]
) -> None:
    opened = open_report(results)
    assert opened.problems == []
    assert shown_ids(opened) == case_ids(results, lambda c: True)
    assert opened.page.locator("#shown").text_content() == f"{results['totals']['cases']} cases"
    assert opened.page.locator("svg g.row").count() == len(results["benchmarks"])
    assert opened.page.evaluate("window.__pwned") is None


@pytest.mark.parametrize(
    ("name", "keep"),
    [
        ("failed", lambda c: c["result"] == "fail"),
        ("flaky", lambda c: c["flaky"]),
        ("disagree", disagrees),
    ],
    ids=["failed only", "flaky only", "disagreements only"],
)
def test_a_filter_shows_exactly_its_cases(
    open_report: Opener, results: dict[str, Any], name: str, keep: Callable[[dict[str, Any]], bool]
) -> None:
    opened = open_report(results)
    expected = case_ids(results, keep)
    assert expected
    opened.page.check(f"input[name={name}]")
    assert shown_ids(opened) == expected
    total = results["totals"]["cases"]
    assert opened.page.locator("#shown").text_content() == f"{len(expected)} of {total} cases"
    empty = {b["code"] for b in results["benchmarks"]} - {code for code, _ in expected}
    for code in empty:
        assert section(opened, code).locator(".empty").is_visible()
    opened.page.uncheck(f"input[name={name}]")
    assert shown_ids(opened) == case_ids(results, lambda c: True)
    assert opened.problems == []


def test_filters_combine(open_report: Opener, results: dict[str, Any]) -> None:
    opened = open_report(results)
    opened.page.check("input[name=failed]")
    opened.page.check("input[name=disagree]")
    assert shown_ids(opened) == case_ids(results, lambda c: c["result"] == "fail" and disagrees(c))


def search(opened: OpenedReport, text: str, expected: int) -> None:
    opened.page.fill("input[name=query]", text)
    opened.page.wait_for_function(
        "n => document.getElementById('shown').textContent.startsWith(n + ' of ')", arg=expected
    )


def test_search_matches_ids_reasons_and_request_text(open_report: Opener, results: dict[str, Any]) -> None:
    opened = open_report(results)

    def matching(word: str) -> set[tuple[str, str]]:
        def keep(c: dict[str, Any]) -> bool:
            request = list(c["request"].values()) if c["request"] else []
            fields = [c["id"], c["reason"], c["nodeid"], c["location"], *request]
            return word.lower() in "\n".join(fields).lower()

        return case_ids(results, keep)

    target = results["benchmarks"][2]["cases"][5]
    search(opened, target["nodeid"], 1)
    assert shown_ids(opened) == {(results["benchmarks"][2]["code"], target["id"])}
    for word in ("NALOXONE", "transcribed as 12"):
        expected = matching(word)
        assert 0 < len(expected) < results["totals"]["cases"]
        search(opened, word, len(expected))
        assert shown_ids(opened) == expected
    opened.page.fill("input[name=query]", "")
    opened.page.wait_for_function("() => !document.getElementById('shown').textContent.includes(' of ')")
    assert shown_ids(opened) == case_ids(results, lambda c: True)


def test_sorting_by_a_column_reorders_the_rows(open_report: Opener, results: dict[str, Any]) -> None:
    opened = open_report(results)
    bench = results["benchmarks"][0]
    indexed = list(enumerate(bench["cases"]))
    table = section(opened, bench["code"])

    def ids() -> list[str]:
        return [row[1] for row in shown(opened)[bench["code"]]]

    assert ids() == [c["id"] for c in bench["cases"]]
    table.locator("button[data-sort=result]").click()
    assert ids() == [c["id"] for i, c in sorted(indexed, key=lambda p: (RESULT_ORDER[p[1]["result"]], p[0]))]
    assert table.locator("th[aria-sort]").get_attribute("aria-sort") == "ascending"
    table.locator("button[data-sort=result]").click()
    assert ids() == [c["id"] for i, c in sorted(indexed, key=lambda p: (-RESULT_ORDER[p[1]["result"]], p[0]))]
    assert table.locator("th[aria-sort]").get_attribute("aria-sort") == "descending"
    table.locator("button[data-sort=reason]").click()
    reasons = [row[7] for row in shown(opened)[bench["code"]]]
    assert reasons == sorted(reasons, key=str.lower) or reasons == sorted(reasons)
    assert table.locator("th[aria-sort]").count() == 1


def test_a_case_expands_to_its_exact_compiled_request(open_report: Opener, results: dict[str, Any]) -> None:
    opened = open_report(results)
    bench = results["benchmarks"][0]
    case = bench["cases"][1]
    table = section(opened, bench["code"])
    toggle = table.locator("tr.case").nth(1).locator("button.toggle")
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    detail = table.locator("tr.detail")
    assert detail.count() == 1
    texts = detail.locator("pre").all_text_contents()
    request = bench["request"]
    assert texts == [
        json.dumps(case["produced"]["output"], indent=2),  # what an author reads first
        case["request"]["expected"],
        case["reason"],
        request["instructions"],
        request["rubric"],
        case["request"]["input"],
        case["request"]["output"],
        case["request"]["expected"],
    ]
    assert case["location"] in (detail.locator("p.note").first.text_content() or "")
    assert detail.locator("table.samples tbody tr").count() == len(case["samples"])
    toggle.click()
    assert table.locator("tr.detail").count() == 0


def test_a_large_table_pages_by_a_hundred_rows(open_report: Opener) -> None:
    results = make_results(625)
    bench = results["benchmarks"][0]
    assert len(bench["cases"]) == 250
    opened = open_report(results)
    table = section(opened, bench["code"])
    pages = []
    for number in (1, 2, 3):
        assert table.locator("nav.pager .page").text_content() == f"page {number} of 3"
        pages.append([row[1] for row in shown(opened)[bench["code"]]])
        if number < 3:
            table.locator("button[data-page='1']").click()
    assert [len(p) for p in pages] == [100, 100, 50]
    assert [i for p in pages for i in p] == [c["id"] for c in bench["cases"]]
    assert table.locator("button[data-page='1']").is_disabled()
    assert opened.problems == []


def test_untrusted_text_cannot_run_script_or_change_the_page(open_report: Opener) -> None:
    results = make_hostile_results()
    opened = open_report(results)
    page = opened.page
    for toggle in page.locator("button.toggle").all():
        toggle.click()
    search(opened, "<img src=y onerror=window.__pwned=1>", 0)
    assert page.locator(".empty:visible").count() == len(results["benchmarks"])
    page.fill("input[name=query]", "")
    page.check("input[name=failed]")
    page.uncheck("input[name=failed]")
    assert page.evaluate("window.__pwned") is None
    assert (
        page.evaluate("document.querySelectorAll('img, iframe, object, embed, a[href^=javascript]').length")
        == 0
    )
    assert page.locator("script").count() == 2
    reasons = page.locator("td.reason div.clip").all_text_contents()
    assert any(HOSTILE[0] in reason for reason in reasons)
    assert any(visible(HOSTILE[5]) in reason for reason in reasons)
    outputs = page.locator("tr.detail pre").all_text_contents()
    assert visible(" ".join(HOSTILE)) in outputs
    assert page.locator("section.bench code", has_text="<script>window.__pwned=1</script>").count() == 1
    assert opened.problems == []


def test_a_thousand_case_report_opens_quickly(open_report: Opener) -> None:
    results = make_results(1000, baseline=make_baseline(1000))
    opened = open_report(results)
    shown_at = opened.page.evaluate("performance.getEntriesByName('llmjudge:rows-shown')[0].startTime")
    print(f"1,000-case report: rows shown {shown_at:.0f} ms after navigation start")
    # A smoke bound only (the target is under 2 s; bench/report_open.py measures it).
    assert shown_at < 8000
    assert opened.page.locator("tr.case").count() == sum(
        min(100, len(b["cases"])) for b in results["benchmarks"]
    )
    assert opened.problems == []


def test_screenshot_of_the_first_screen(open_report: Opener, results: dict[str, Any]) -> None:
    if os.environ.get("LLMJUDGE_SCREENSHOT") != "1":
        pytest.skip("set LLMJUDGE_SCREENSHOT=1 to save docs/report.png")
    opened = open_report(results)
    # A tall first screen: the header, gates, rubrics, comparison and calibration.
    opened.page.set_viewport_size({"width": 1400, "height": 2040})
    opened.page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000
