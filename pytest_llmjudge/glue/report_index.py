"""pytest's failure summary, made linear in the number of reports.

For every failure it prints, pytest's terminal reporter looks for that test's teardown reports
by scanning every passed report of the run (``TerminalReporter._get_teardown_reports``): with
20,000 cases of which 2,000 fail, 2,000 scans of 40,000 reports, most of a run's time. This
replaces the scan, for one reporter, by a lookup in an index built once when the summary starts.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def index_teardown_reports(reporter: Any) -> None:
    """Make ``reporter``'s teardown-report lookup an index (same reports, same order)."""
    if reporter is None or not callable(getattr(reporter, "_get_teardown_reports", None)):
        return  # another terminal reporter, or a pytest without this lookup: leave it as it is
    index: dict[Any, list[Any]] | None = None

    def teardown_reports(node_id: Any) -> list[Any]:
        nonlocal index
        if index is None:
            index = defaultdict(list)
            for report in reporter.getreports(""):
                if report.when == "teardown":
                    index[getattr(report, "id", report.nodeid)].append(report)
        return list(index.get(node_id, ()))

    reporter._get_teardown_reports = teardown_reports
