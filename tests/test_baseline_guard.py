"""The regression gate cannot be switched off by a baseline that does not load, and calibration
cases (whose result says whether judge and human agreed) never count as release verdicts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy  # noqa: F401  (in-process pytester runs cannot import numpy a second time)
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.multitest
import statsmodels.stats.proportion  # noqa: F401
from conftest import Suite

from pytest_llmjudge.cli.main import main

HEAD = """\
code: A-CMP1
label: Compared
concept: The output is fine.
weight: 1
threshold: 0.5
inclusion_criteria: Apply always. Flag if it says FAIL.
"""


def release(total: int = 10, calibration_file: str | None = None) -> str:
    cases = "".join(f"  - id: case-{i:02d}\n    candidate_output: fine {i}\n" for i in range(total))
    extra = f"calibration_file: {calibration_file}\n" if calibration_file else ""
    return f"{HEAD}{extra}cases:\n{cases}"


def baseline_run(suite: Suite) -> None:
    suite.benchmark("A-CMP1", release())
    assert suite.run("--llmjudge-results", "base.json").ret == 0


def unreadable(suite: Suite, kind: str) -> None:
    """Make ``base.json`` a baseline that cannot be read, of the given kind."""
    path = suite.root / "base.json"
    text = path.read_text()
    if kind == "missing":
        path.unlink()
    elif kind == "truncated":
        path.write_text(text[: len(text) // 2])
    elif kind == "wrong format":
        path.write_text(re.sub(r'"format": \d+', '"format": 99', text, count=1))
    elif kind == "schema":
        path.write_text(text.replace('"pass_rate"', '"pass_rte"', 1))


KINDS = ["missing", "truncated", "wrong format", "schema"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreadable_baseline_fails_a_run_that_fails_on_regression(suite: Suite, kind: str) -> None:
    baseline_run(suite)
    unreadable(suite, kind)
    result = suite.run(
        "--llmjudge-results",
        "cand.json",
        "--llmjudge-baseline",
        "base.json",
        "--llmjudge-fail-on",
        "regression",
    )
    output = result.stdout.str()
    assert result.ret == 1, output
    exit_text = output[output.index("exit status 1") :]
    assert "base.json" in exit_text and "regression not checked" in exit_text
    data = json.loads((suite.root / "cand.json").read_text())
    assert data["exit_status"] == 1
    assert any("base.json" in reason for reason in data["exit_reasons"]), data["exit_reasons"]
    (benchmark,) = data["benchmarks"]
    assert benchmark["gate"]["status"] == "fail" and "base.json" in benchmark["gate"]["detail"]
    assert data["comparison"] is None and data["flips"] is None


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreadable_baseline_is_a_usage_error_naming_it_before_anything_is_judged(
    suite: Suite, kind: str
) -> None:
    baseline_run(suite)
    unreadable(suite, kind)
    (suite.root / "judge_calls.log").unlink()
    result = suite.run("--llmjudge-baseline", "base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert re.search(r"ERROR: --llmjudge-baseline: \S*base\.json", result.stderr.str()), result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert suite.judge_calls() == []


@pytest.mark.parametrize("kind", KINDS)
def test_compare_refuses_an_unreadable_baseline_naming_it(
    suite: Suite, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline_run(suite)
    (suite.root / "base.json").rename(suite.root / "cand.json")
    baseline_run(suite)
    unreadable(suite, kind)
    capsys.readouterr()
    base, cand = str(suite.root / "base.json"), str(suite.root / "cand.json")
    assert main(["compare", base, cand, "--fail-on", "regression"]) != 0
    captured = capsys.readouterr()
    assert base in captured.err and "Traceback" not in captured.err


# -- calibration cases are not release cases ------------------------------------------------------


def calibration_lines(label: str) -> str:
    """Eight calibration cases the fake judge passes; four share an id with a release case."""
    ids = [f"case-{i:02d}" for i in range(4)] + [f"cal-{i}" for i in range(4, 8)]
    return "".join(json.dumps({"id": i, "candidate_output": "fine", "label": label}) + "\n" for i in ids)


def test_relabelled_calibration_cases_are_no_regression(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    suite.benchmark("A-CMP1", release(calibration_file="data/A-CMP1.jsonl"))
    suite.write("data/A-CMP1.jsonl", calibration_lines("pass"), dedent=False)
    assert suite.run("--llmjudge-results", "base.json").ret == 0
    # the humans now say fail: the judge disagrees on all eight, its verdicts are the same
    suite.write("data/A-CMP1.jsonl", calibration_lines("fail"), dedent=False)
    result = suite.run(
        "--llmjudge-results",
        "cand.json",
        "--llmjudge-baseline",
        "base.json",
        "--llmjudge-fail-on",
        "regression",
    )
    output = result.stdout.str()
    assert result.ret == 0, output
    data = json.loads((suite.root / "cand.json").read_text())
    (row,) = data["comparison"]
    assert (row["n_paired"], row["b"], row["c"]) == (10, 0, 0)
    assert row["unpaired"] == {"baseline_only": [], "candidate_only": []}
    assert data["flips"] == []
    (benchmark,) = data["benchmarks"]
    assert benchmark["gate"]["pass_rate"] == 1.0 and benchmark["gate"]["ci_high"] == 1.0
    assert "pass rate 100.0% of 10 verdicts" in output
    capsys.readouterr()
    base, cand = str(suite.root / "base.json"), str(suite.root / "cand.json")
    assert main(["compare", base, cand, "--fail-on", "regression"]) == 0
    assert main(["show", cand]) == 0
    assert "of 10 verdicts" in capsys.readouterr().out
    # a results file without flips (no baseline in its run): the report pairs the runs itself
    suite.run("--llmjudge-results", "again.json")
    page = suite.root / "flips.html"
    assert main(["report", str(suite.root / "again.json"), "--baseline", base, "-o", str(page)]) == 0
    assert "No case changed its verdict." in page.read_text()


def report_cases(path: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    """The case rows a report page draws its tables from, by id (calibration ids prefixed)."""
    page = path.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
    assert block is not None
    (benchmark,) = json.loads(block.group(1))["benchmarks"]
    return {c["nodeid"].split("::", 2)[-1]: c for c in benchmark["cases"]}


def test_the_report_agreement_column_reads_calibration_cases_right(suite: Suite) -> None:
    rows = {"k0": ("FAIL", "fail"), "k1": ("fine", "pass"), "k2": ("fine", "fail"), "k3": ("FAIL", "pass")}
    suite.write(
        "data/A-CMP1.jsonl",
        "".join(
            json.dumps({"id": i, "candidate_output": o, "label": lab}) + "\n" for i, (o, lab) in rows.items()
        ),
        dedent=False,
    )
    labelled = (
        "  - id: r0\n    candidate_output: FAIL\n    label: fail\n"
        "  - id: r1\n    candidate_output: fine\n    label: fail\n"
    )
    suite.benchmark("A-CMP1", release(2, "data/A-CMP1.jsonl") + labelled)
    suite.run("--llmjudge-html", "page.html")
    cases = report_cases(suite.root / "page.html")
    disagree = {name: c["disagree"] for name, c in cases.items() if c["label"]}
    assert disagree == {
        "r0": False,  # human fail, judge fail
        "r1": True,  # human fail, judge pass
        "calibration::k0": False,  # human fail, judge fail: agrees
        "calibration::k1": False,
        "calibration::k2": True,
        "calibration::k3": True,
    }
