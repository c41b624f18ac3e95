"""``llmjudge merge``: the results files of ``-k`` shards give the gates and exit status of one
full run of the same cases; files that are not shards of one suite are refused by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy  # noqa: F401  (in-process pytester runs cannot import numpy a second time)
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.multitest
import statsmodels.stats.proportion  # noqa: F401
from conftest import Suite

from pytest_llmjudge.cli.main import main
from pytest_llmjudge.reporting.results_file import load_results

# A-ONE passes with a failing case within its threshold; B-TWO fails its gate.
A_ONE = """\
code: A-ONE
label: One
concept: The output says hello.
threshold: 0.7
inclusion_criteria: Apply when there is output. Flag if it does not say hello.
cases:
  - {id: a1, candidate_output: hello}
  - {id: a2, candidate_output: hello}
  - {id: a3, candidate_output: FAIL}
  - {id: a4, candidate_output: hello}
"""
B_TWO = (
    A_ONE.replace("A-ONE", "B-TWO")
    .replace("label: One", "label: Two")
    .replace("threshold: 0.7", "threshold: 0.9")
)
B_TWO = B_TWO.replace("id: a", "id: b").replace(
    "{id: b4, candidate_output: hello}", "{id: b4, candidate_output: FAIL}"
)
SHARD = "a1 or a2 or b1"


def judged(suite: Suite) -> Suite:
    suite.benchmark("A-ONE", A_ONE)
    suite.benchmark("B-TWO", B_TWO)
    return suite


def shards(suite: Suite, *extra: str) -> tuple[Path, Path]:
    suite.run("-k", SHARD, "--llmjudge-results=s1.json", *extra)
    suite.run("-k", f"not ({SHARD})", "--llmjudge-results=s2.json", *extra)
    return suite.root / "s1.json", suite.root / "s2.json"


def merge(*args: str | Path) -> int:
    return main(["merge", *map(str, args)])


def gates(data: dict[str, Any]) -> dict[str, Any]:
    return {b["code"]: (b["gate"], b["gate_rule"], b["calibration"]) for b in data["benchmarks"]}


def test_merged_shards_gate_as_one_full_run(suite: Suite, capsys: pytest.CaptureFixture[str]) -> None:
    judged(suite)
    full = suite.run("--llmjudge-results=full.json")
    one, two = shards(suite)
    partial = load_results(one)
    assert {b["gate"]["status"] for b in partial["benchmarks"]} == {
        "partial"
    }  # each shard alone decides nothing
    capsys.readouterr()
    status = merge(one, two, "-o", "all.json")
    assert status == full.ret == 1
    merged, whole = load_results(suite.root / "all.json"), load_results(suite.root / "full.json")
    assert gates(merged) == gates(whole)
    assert [b["code"] for b in merged["benchmarks"]] == ["A-ONE", "B-TWO"]
    assert merged["benchmarks"][0]["gate"]["status"] == "pass"  # its failing case is within the gate
    assert merged["exit_reasons"] == whole["exit_reasons"]
    assert merged["suite_digest"] == whole["suite_digest"]
    counted = ("cases", "passed", "failed", "errors", "skipped", "flaky")
    assert [merged["totals"][k] for k in counted] == [whole["totals"][k] for k in counted]
    assert merged["rubrics"] == whole["rubrics"]
    out = capsys.readouterr().out
    assert "gate B-TWO: fail" in out and "exit status 1: gate B-TWO failed" in out


def test_merged_shards_compare_with_a_baseline_as_one_run(suite: Suite) -> None:
    judged(suite)
    suite.run("--llmjudge-results=base.json")
    (suite.root / "benchmarks/a/A-ONE.yaml").write_text(
        A_ONE.replace("{id: a1, candidate_output: hello}", "{id: a1, candidate_output: FAIL}")
    )
    options = ("--llmjudge-baseline=base.json", "--llmjudge-fail-on=regression")
    full = suite.run("--llmjudge-results=full.json", *options)
    one, two = shards(suite, *options)
    assert merge(one, two, "-o", "all.json") == full.ret
    merged, whole = load_results(suite.root / "all.json"), load_results(suite.root / "full.json")
    assert merged["comparison"] == whole["comparison"] and merged["flips"] == whole["flips"]
    assert merged["flips"] == [{"benchmark": "A-ONE", "case": "a1", "baseline": "pass", "candidate": "fail"}]
    assert gates(merged) == gates(whole) and merged["exit_reasons"] == whole["exit_reasons"]


def test_shards_judged_by_another_judge_are_refused_naming_it(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    judged(suite)
    one, two = shards(suite)
    data = json.loads(two.read_text())
    data["benchmarks"][0]["judge"]["model"] = "openai:gpt-4o"
    two.write_text(json.dumps(data))
    capsys.readouterr()
    assert merge(one, two, "-o", "all.json") == 2
    err = capsys.readouterr().err
    assert "s2.json: benchmark A-ONE: judge.model differs from" in err
    assert "'function:fake-judge' there, 'openai:gpt-4o' here" in err and "Traceback" not in err
    assert not (suite.root / "all.json").exists()


def test_a_case_in_two_shards_or_other_settings_are_refused(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    judged(suite)
    one, _ = shards(suite)
    assert merge(one, one, "-o", "all.json") == 2
    assert "case A-ONE::a1 is also in" in capsys.readouterr().err
    suite.run("-k", f"not ({SHARD})", "--llmjudge-results=s3.json", "--llmjudge-margin=0.1")
    assert merge(one, suite.root / "s3.json", "-o", "all.json") == 2
    assert "s3.json: settings.margin differs from" in capsys.readouterr().err
