"""The HTML report's layout at 1,400 px (system Chromium): no word broken in the gate table, no
case id wrapped over two lines."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.conftest import GOOD, Suite

from .conftest import OpenedReport

Opener = Callable[..., OpenedReport]

# The words of each cell of a column (by header text) that the browser laid out over more than
# one line box: a word broken mid-word ("threshol" / "d").
BROKEN_WORDS = """(table, header) => {
  const index = [...table.querySelectorAll("thead th")].findIndex(th => th.textContent.trim() === header);
  const broken = [];
  for (const row of table.querySelectorAll("tbody tr")) {
    const cell = row.cells[index];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map(rect => Math.round(rect.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""
# Case ids drawn over more than one line.
WRAPPED_IDS = """() => [...document.querySelectorAll("tr.case td:nth-child(2) code")]
  .filter(code => new Set([...code.getClientRects()].map(rect => Math.round(rect.top))).size > 1
                  || code.getClientRects().length > 1)
  .map(code => code.textContent)"""


def _run_results(suite: Suite) -> dict[str, Any]:
    """A real run's results file: three benchmarks, hyphenated case ids, one failing case; the
    reasons made long afterwards, as a wordy judge writes them."""
    for code in ("A-JUDGE", "B-DOSAGE", "C-FOLLOW-UP"):
        outputs = ["FAIL", "hello", "hello", "hello"]
        cases = "".join(
            f"  - id: follow-up-question-about-dosage-{i:02d}\n    candidate_output: {out}\n"
            for i, out in enumerate(outputs)
        )
        suite.benchmark(
            code,
            GOOD.replace("A-OK1", code).replace("Always fine", "judged").split("cases:")[0]
            + "cases:\n"
            + cases,
        )
    suite.run("--llmjudge-results=run.json")
    results: dict[str, Any] = json.loads((suite.root / "run.json").read_text())
    for benchmark in results["benchmarks"]:
        for case in benchmark["cases"]:
            case["reason"] = "The answer addresses the question but " * 12
    return results


def test_at_1400_px_no_word_breaks_and_no_case_id_wraps(open_report: Opener, suite: Suite) -> None:
    opened = open_report(_run_results(suite))
    assert opened.page.viewport_size == {"width": 1400, "height": 1000}
    gates = opened.page.locator("table.gates")
    headers = ("benchmark", "label", "gate", "threshold", "cost", "kind")
    broken = {header: gates.evaluate(BROKEN_WORDS, header) for header in headers}
    assert broken == {header: [] for header in headers}
    assert opened.page.evaluate(WRAPPED_IDS) == []
