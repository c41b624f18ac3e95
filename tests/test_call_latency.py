"""Each judge call's wall time as the plugin saw it, beside the time the judge's server said it
spent (``openai-processing-ms``), and their median difference in the results file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conftest import Suite

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from http_judge import serve_judge

BENCHMARK = """\
code: L1
concept: The output says hello.
threshold: 0.5
inclusion_criteria: Apply when there is output. Flag if it does not say hello.
cases:
  - {id: c0, candidate_output: hello}
  - {id: c1, candidate_output: hello there}
  - {id: c2, candidate_output: hello again}
"""


def samples(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for b in results["benchmarks"] for c in b["cases"] for s in c["samples"]]


def test_a_server_that_says_its_time_gives_each_calls_and_the_median_overhead(bare_suite: Suite) -> None:
    bare_suite.benchmark("L1", BENCHMARK)
    with serve_judge(latency=0.2, model="timed-judge") as server:
        result = bare_suite.pytester.runpytest_subprocess(
            "-p",
            "no:syrupy",
            "-p",
            "no:cacheprovider",
            "benchmarks",
            "--llmjudge-model=openai:timed-judge",
            f"--llmjudge-base-url={server.base_url}",
            "--llmjudge-results=r.json",
        )
    result.assert_outcomes(passed=4)
    results = json.loads((bare_suite.root / "r.json").read_text())
    for sample in samples(results):
        assert 0.19 <= sample["model_latency_s"] <= sample["latency_s"], sample
    latency = results["call_latency"]
    assert latency["calls"] == latency["server_timed"] == 3
    assert 0.19 <= latency["server_median_s"] <= latency["wall_median_s"]
    overhead = latency["overhead_median_s"]
    assert overhead == round(latency["wall_median_s"] - latency["server_median_s"], 6) or 0 <= overhead < 1


def test_a_judge_that_does_not_say_is_timed_by_wall_alone_and_a_cached_run_times_none(suite: Suite) -> None:
    suite.benchmark("L1", BENCHMARK)
    suite.run("benchmarks", "--llmjudge-results=r.json", cache=True).assert_outcomes(passed=4)
    results = json.loads((suite.root / "r.json").read_text())
    assert all(s["model_latency_s"] is None and s["latency_s"] >= 0 for s in samples(results))
    latency = results["call_latency"]
    assert latency["calls"] == 3 and latency["server_timed"] == 0
    assert latency["server_median_s"] is None and latency["overhead_median_s"] is None
    suite.run("benchmarks", "--llmjudge-results=r.json", cache=True).assert_outcomes(passed=4)
    assert json.loads((suite.root / "r.json").read_text())["call_latency"] is None  # every verdict cached
