"""Baseline comparison: a run compared case by case with an earlier run's results file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy  # noqa: F401  (in-process pytester runs cannot import numpy a second time)
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.multitest
import statsmodels.stats.proportion  # noqa: F401
from conftest import Suite

from pytest_llmjudge.cli.main import main
from pytest_llmjudge.cli.runs import compare_files

HEAD = """\
code: A-CMP1
label: Compared
concept: The output is fine.
weight: 1
threshold: 0.5
inclusion_criteria: Apply always. Flag if it says FAIL.
cases:
"""


def benchmark(failing: set[int], total: int) -> str:
    cases = "".join(
        f"  - id: case-{i:02d}\n    candidate_output: {'FAIL' if i in failing else 'fine'} {i}\n"
        for i in range(total)
    )
    return HEAD + cases


def two_runs(suite: Suite, before: set[int], after: set[int], total: int, *options: str) -> pytest.RunResult:
    suite.benchmark("A-CMP1", benchmark(before, total))
    suite.run("--llmjudge-results", "base.json")
    suite.benchmark("A-CMP1", benchmark(after, total))
    return suite.run("--llmjudge-results", "cand.json", "--llmjudge-baseline", "base.json", *options)


def comparison(suite: Suite) -> dict:  # type: ignore[type-arg]
    data = json.loads((suite.root / "cand.json").read_text())
    assert data["settings"]["baseline"] == "base.json"
    (row,) = data["comparison"]
    return row  # type: ignore[no-any-return]


def test_twelve_lost_two_gained_is_a_regression_that_fails_the_run(suite: Suite) -> None:
    # baseline: cases 12 and 13 fail; candidate: 0-11 fail, 12 and 13 pass -> b = 12, c = 2
    result = two_runs(suite, {12, 13}, set(range(12)), 40, "--llmjudge-fail-on", "regression")
    row = comparison(suite)
    assert (row["b"], row["c"], row["verdict"]) == (12, 2, "regression")
    assert row["p_adjusted"] < 0.05
    output = result.stdout.str()
    assert "baseline comparison" in output and "regression" in output
    assert "regression against the baseline: 12 case(s) pass → fail, 2 fail → pass" in output
    assert result.ret == 1
    data = json.loads((suite.root / "cand.json").read_text())
    assert data["benchmarks"][0]["gate"]["status"] == "fail"
    assert data["exit_status"] == 1
    assert len(data["flips"]) == 14


def test_a_regression_without_fail_on_is_reported_but_does_not_fail(suite: Suite) -> None:
    result = two_runs(suite, {12, 13}, set(range(12)), 40)
    assert comparison(suite)["verdict"] == "regression"
    assert result.ret == 0  # the gate (70% >= 0.5) decides


def test_five_lost_five_gained_is_no_regression(suite: Suite) -> None:
    result = two_runs(suite, set(range(5, 10)), set(range(5)), 40, "--llmjudge-fail-on", "regression")
    row = comparison(suite)
    assert (row["b"], row["c"]) == (5, 5)
    assert row["verdict"] in {"no significant change", "inconclusive"}
    assert result.ret == 0


def test_ten_cases_cannot_show_a_five_point_margin(suite: Suite) -> None:
    result = two_runs(suite, set(), set(), 10, "--llmjudge-margin", "0.05")
    row = comparison(suite)
    assert (row["b"], row["c"], row["verdict"]) == (0, 0, "inconclusive")
    assert "inconclusive" in result.stdout.str()


def test_compare_command_gives_the_same_verdict_and_exit_status(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    two_runs(suite, {12, 13}, set(range(12)), 40)
    base, cand = str(suite.root / "base.json"), str(suite.root / "cand.json")
    assert main(["compare", base, cand]) == 0
    assert main(["compare", base, cand, "--fail-on", "regression"]) == 1
    out = capsys.readouterr().out
    assert "A-CMP1" in out and "regression" in out
    stored = comparison(suite)
    offline = compare_files(
        json.loads(Path(base).read_text()), json.loads(Path(cand).read_text()), margin=0.05, alpha=0.05
    )
    assert offline == [stored]


def test_compare_refuses_a_file_that_is_not_a_results_file(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": 99}')
    assert main(["compare", str(bad), str(bad)]) == 2
    assert "results format 99 is not supported" in capsys.readouterr().err


def test_a_missing_baseline_is_a_usage_error_not_a_traceback(suite: Suite) -> None:
    suite.benchmark("A-CMP1", benchmark(set(), 3))
    result = suite.run("--llmjudge-results", "cand.json", "--llmjudge-baseline", "nowhere.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--llmjudge-baseline: " in result.stderr.str() and "nowhere.json" in result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
