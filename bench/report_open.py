"""How long the HTML report of a large run takes to open in a real browser.

Generates a results dict of N cases (``tests/reporting/results_factory.py``: six benchmarks, the
largest holding 40 % of the cases, a baseline comparison and calibration), renders the report,
opens it from a file:// URL in the system Chromium (headless, through playwright) R times and
prints the medians of:

- rows shown: navigation start → the first page of every case table laid out (the report's
  ``llmjudge:rows-shown`` performance mark, set after its script has drawn the rows);
- first contentful paint, and the load event end, from the browser's own timings;
- wall time seen from Python: ``page.goto`` called → rows shown (includes playwright's round trips).

    python bench/report_open.py [--cases 1000] [--runs 5] [--results results.json]
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_llmjudge.reporting.html import write_report  # noqa: E402
from pytest_llmjudge.reporting.results_file import load_results  # noqa: E402
from tests.reporting.conftest import CHROMIUM_ARGS  # noqa: E402  (the browser tests' flags)
from tests.reporting.results_factory import make_baseline, make_results  # noqa: E402

TIMINGS = """() => ({
  rows: performance.getEntriesByName("llmjudge:rows-shown")[0].startTime,
  paint: (performance.getEntriesByName("first-contentful-paint")[0] || {startTime: null}).startTime,
  load: performance.getEntriesByType("navigation")[0].loadEventEnd,
  drawn: document.querySelectorAll("tr.case").length,
})"""


def measure(page_path: Path, runs: int) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or "/usr/bin/chromium"
    samples = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        errors: list[str] = []
        for _ in range(runs + 1):  # the first open warms the browser up and is not counted
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors.clear()
            page.on("pageerror", lambda error: errors.append(str(error)))
            started = time.perf_counter()
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_selector("body[data-ready]")
            wall = (time.perf_counter() - started) * 1000
            timings: dict[str, Any] = page.evaluate(TIMINGS)
            if errors:
                raise SystemExit(f"page errors: {errors}")
            samples.append({**timings, "wall": wall})
            page.close()
        browser.close()
    return samples[1:]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--results", type=Path, help="a results file to open instead of a generated run")
    args = parser.parse_args()
    if args.results:
        results, baseline = load_results(args.results), None
    else:
        baseline = make_baseline(args.cases)
        results = make_results(args.cases, baseline=baseline)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        page_path = write_report(results, Path(folder) / "report.html", baseline)
        render = (time.perf_counter() - started) * 1000
        size = page_path.stat().st_size
        samples = measure(page_path, args.runs)

    def median(key: str) -> str:
        values = [s[key] for s in samples if s[key] is not None]
        return f"{statistics.median(values):8.1f}" if values else "       –"

    cases = results["totals"]["cases"]
    print(f"N={cases} cases, {len(results['benchmarks'])} benchmarks; report {size / 1024:.0f} KiB")
    print(f"Python {platform.python_version()}, {platform.machine()}, chromium at {shutil.which('chromium')}")
    print(f"render_report + write: {render:.1f} ms")
    print(f"rows drawn on open: {samples[0]['drawn']} (first page of each case table)")
    print(f"\nmedian of {len(samples)} opens (ms)")
    print(f"  navigation start -> rows shown   {median('rows')}")
    print(f"  first contentful paint           {median('paint')}")
    print(f"  load event end                   {median('load')}")
    print(f"  goto() -> rows shown, wall       {median('wall')}")
    print("  rows shown, each run: " + ", ".join(f"{s['rows']:.0f}" for s in samples))


if __name__ == "__main__":
    main()
