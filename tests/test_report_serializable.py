"""A case item's report carries its case record to the plugins that serialize reports
(pytest-reportlog, an xdist worker): as JSON-ready values, the run's own summary unchanged."""

from __future__ import annotations

import json

from conftest import GOOD, JUDGE_CONFTEST, Suite

# What pytest-reportlog does with each report: the serializable form, written as one JSON line.
REPORT_LOG = """

import json as _json

_CONFIG = []


def pytest_configure(config):
    _CONFIG.append(config)


def pytest_runtest_logreport(report):
    data = _CONFIG[0].hook.pytest_report_to_serializable(config=_CONFIG[0], report=report)
    with open("reports.jsonl", "a") as out:
        out.write(_json.dumps(data) + "\\n")
"""


def test_a_serialized_case_report_carries_its_record_as_plain_values(suite: Suite) -> None:
    suite.write("conftest.py", JUDGE_CONFTEST + REPORT_LOG, dedent=False)
    suite.benchmark("A-OK1", GOOD)
    result = suite.run("benchmarks", "--llmjudge-results=results.json")
    result.assert_outcomes(passed=2)
    lines = [json.loads(line) for line in (suite.root / "reports.jsonl").read_text().splitlines()]
    records = [line["llmjudge"] for line in lines if "llmjudge" in line]
    (record,) = {json.dumps(r, sort_keys=True): r for r in records}.values()  # setup, call, teardown
    assert record["nodeid"] == "benchmarks/a/A-OK1.yaml::A-OK1::says-hello"
    assert (record["result"], record["model"], record["judge"]["evaluator_type"]) == (
        "pass",
        "function:fake-judge",
        "llm_judge",
    )
    ((written,),) = [b["cases"] for b in json.loads((suite.root / "results.json").read_text())["benchmarks"]]
    assert (written["nodeid"], written["result"]) == (record["nodeid"], "pass")
