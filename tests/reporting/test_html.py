"""The HTML report without a browser: view-model functions, escaping, no remote resources."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.reporting.html import (
    case_data,
    compute_flips,
    duration,
    embed_json,
    gate_chart,
    interval,
    number,
    p_value,
    percent,
    points,
    render_report,
    report_context,
    sorted_benchmarks,
    visible,
    write_report,
)

from .results_factory import HOSTILE, make_baseline, make_hostile_results, make_results


class Page(HTMLParser):
    """Start tags with their attributes, the text of every script, and the visible text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.text: list[str] = []
        self._in_script: dict[str, str | None] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            self.scripts.append((self._in_script, data))
        else:
            self.text.append(data)


def data_block(page: str) -> Any:
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert match
    return json.loads(match.group(1))


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "–"), (0.9, "90%"), (2 / 3, "66.7%"), (1.0, "100%"), (0.0, "0%"), (0.0004, "0%")],
)
def test_percent(value: float | None, text: str) -> None:
    assert percent(value) == text


def test_number_formats() -> None:
    assert interval(0.2083, 0.9394) == "20.8–93.9%"
    assert interval(None, 0.5) == "–"
    assert points(-0.0833) == "−8.3 pp"
    assert points(0.25) == "+25 pp"
    assert points(0.0) == "±0 pp"
    assert points(0.584, signed=False) == "58.4 pp"
    assert number(0.6667) == "0.667"
    assert number(0.85) == "0.85"
    assert number(-0.0001) == "0"
    assert number(None) == "–"
    assert p_value(0.0004) == "< 0.001"
    assert p_value(0.0469) == "0.047"
    assert duration("2026-11-23T10:30:00Z", "2026-11-23T10:31:42.517Z") == "1 min 42.5 s"
    assert duration("2026-11-23T10:30:00+00:00", "2026-11-23T10:30:03.25+00:00") == "3.2 s"


def test_benchmarks_are_listed_failing_first_then_by_code() -> None:
    def bench(code: str, status: str) -> dict[str, Any]:
        return {"code": code, "gate": {"status": status}}

    ordered = sorted_benchmarks(
        [
            bench("A", "pass"),
            bench("B", "no verdicts"),
            bench("C", "fail"),
            bench("D", "untrusted"),
            bench("E", "fail"),
            bench("F", "partial"),
        ]
    )
    assert [b["code"] for b in ordered] == ["C", "E", "D", "F", "B", "A"]


def test_flips_pair_benchmark_code_and_case_id() -> None:
    baseline, results = make_baseline(), make_results()
    flips = compute_flips(baseline, results)
    before = {(b["code"], c["id"]): c["result"] for b in baseline["benchmarks"] for c in b["cases"]}
    expected = [
        (b["code"], c["id"])
        for b in results["benchmarks"]
        for c in b["cases"]
        if c["result"] in ("pass", "fail") and before[(b["code"], c["id"])] in ("pass", "fail")
        if before[(b["code"], c["id"])] != c["result"]
    ]
    assert [(f["benchmark"], f["case"]) for f in flips] == expected
    assert expected
    for flip in flips:
        assert flip["baseline"] != flip["candidate"]
        assert {flip["baseline"], flip["candidate"]} == {"pass", "fail"}


def test_a_case_that_errored_or_is_new_does_not_flip() -> None:
    def run(cases: dict[str, str]) -> dict[str, Any]:
        cases_ = [{"id": k, "result": v, "calibration": False} for k, v in cases.items()]
        return {"benchmarks": [{"code": "X", "cases": cases_}]}

    baseline = run({"a": "pass", "b": "error", "c": "fail", "d": "pass"})
    results = run({"a": "fail", "b": "pass", "c": "fail", "e": "fail"})
    assert compute_flips(baseline, results) == [
        {"benchmark": "X", "case": "a", "baseline": "pass", "candidate": "fail"}
    ]


def test_the_report_shows_computed_flips_when_the_results_have_no_comparison() -> None:
    baseline, results = make_baseline(), make_results()
    assert results["comparison"] is None
    context = report_context(results, baseline)
    assert context["flips"] == compute_flips(baseline, results)
    page = render_report(results, baseline)
    assert "holds no statistical comparison" in page
    assert "Flipped cases" in page
    assert "Flipped cases" not in render_report(results)


def test_the_chart_places_rate_interval_and_threshold_on_the_axis() -> None:
    results = make_results()
    chart = gate_chart(results["benchmarks"])
    span = chart.right - chart.left
    for row, bench in zip(chart.rows, results["benchmarks"], strict=True):
        gate = bench["gate"]
        assert row.rate == pytest.approx(chart.left + span * gate["pass_rate"], abs=0.1)
        assert row.low is not None and row.high is not None and row.low <= row.rate <= row.high
        if bench["threshold"] is None:
            assert row.threshold is None
        else:
            assert row.threshold == pytest.approx(chart.left + span * bench["threshold"], abs=0.1)
    assert [t for _, t in chart.ticks] == ["0%", "25%", "50%", "75%", "100%"]
    assert chart.height == 24 + len(chart.rows) * chart.row_height + 8


def test_embedded_json_cannot_close_its_block() -> None:
    value = {"text": "</script><!-- <script> & \u2028\u2029 é 🧪 \x00"}
    text = embed_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029", "\x00"}
    assert json.loads(text) == value


def test_invisible_controls_become_visible_markers() -> None:
    assert visible("a\u202eb\x00c\u2066d") == "a⟦U+202E⟧b⟦U+0000⟧c⟦U+2066⟧d"
    assert visible("plain 🧪 text") == "plain 🧪 text"


def test_the_data_block_holds_every_case_in_page_order() -> None:
    results = make_results(200, baseline=make_baseline(200))
    page = render_report(results)
    data = data_block(page)
    assert data == json.loads(json.dumps(case_data(results)))
    assert [b["code"] for b in data["benchmarks"]] == [
        b["code"] for b in sorted_benchmarks(results["benchmarks"])
    ]
    assert sum(len(b["cases"]) for b in data["benchmarks"]) == results["totals"]["cases"]
    for section, bench in zip(re.findall(r'data-bench="(\d+)"', page), data["benchmarks"], strict=True):
        assert f'id="bench-{section}"' in page
        assert f"<code>{bench['code']}</code>" in page


def test_the_page_loads_nothing_from_elsewhere() -> None:
    page = render_report(make_results(200, baseline=make_baseline(200)))
    references = [
        (tag, name, value)
        for tag, attrs in Page(page).tags
        for name, value in attrs.items()
        if name in ("src", "href", "action", "xlink:href", "srcset", "poster", "data")
    ]
    assert references
    for tag, name, value in references:
        assert value is not None and (value.startswith("#") or value.startswith("data:")), (tag, name, value)
    assert "http://" not in page and "https://" not in page
    assert "@import" not in page and "url(" not in page


def test_the_content_security_policy_allows_only_the_reports_own_script_and_style() -> None:
    page = render_report(make_results())
    parsed = Page(page)
    csp = next(
        a["content"]
        for t, a in parsed.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp is not None and "default-src 'none'" in csp and "unsafe" not in csp
    code = next(text for attrs, text in parsed.scripts if "type" not in attrs)
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp


def test_untrusted_text_in_the_static_parts_is_escaped() -> None:
    results = make_hostile_results()
    page = render_report(results)
    parsed = Page(page)
    assert [attrs for tag, attrs in parsed.tags if tag == "script"] == [
        {"type": "application/json", "id": "data"},
        {},
    ]
    assert not [tag for tag, _ in parsed.tags if tag in ("img", "iframe", "object", "embed", "base")]
    assert [attrs["id"] for tag, attrs in parsed.tags if tag == "form"] == ["filters"]
    for tag, attrs in parsed.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not any(value and "javascript:" in value for value in attrs.values()), (tag, attrs)
    text = "".join(parsed.text)
    for payload in (HOSTILE[0], HOSTILE[1], HOSTILE[2], HOSTILE[3], "{{ 7*7 }} & &amp;"):
        assert payload in text
    assert "⟦U+202E⟧evil reversed⟦U+202C⟧" in text
    assert "\u202e" not in page and "\x00" not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page


def test_untrusted_text_reaches_the_data_block_whole() -> None:
    results = make_hostile_results()
    data = data_block(render_report(results))
    first = data["benchmarks"][[b["code"] for b in data["benchmarks"]].index("A-MED1")]["cases"][0]
    assert first["id"] == "<script>window.__pwned=1</script>"
    assert HOSTILE[2] in first["reason"] and "emoji 🧪🔥 and NUL ⟦U+0000⟧ here" in first["reason"]
    assert "line\u2028separator\u2029paragraph" in first["reason"]


def test_write_report_creates_its_folder(tmp_path: Path) -> None:
    path = write_report(make_results(), tmp_path / "reports" / "run.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_number_that_is_not_finite_shows_as_unknown() -> None:
    results = make_results()
    results["benchmarks"][0]["gate"]["pass_rate"] = float("nan")
    results["benchmarks"][0]["cases"][0]["score"] = float("inf")
    page = render_report(results)
    cases = {c["id"]: c for b in data_block(page)["benchmarks"] for c in b["cases"]}
    assert cases[results["benchmarks"][0]["cases"][0]["id"]]["score"] is None
    assert "NaN" not in page and "Infinity" not in page
