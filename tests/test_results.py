"""The results file of a judged run, the HTML report option and the commands that read them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy  # noqa: F401  (in-process pytester runs cannot import numpy a second time)
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.multitest
import statsmodels.stats.proportion  # noqa: F401
from conftest import GOOD, Suite

from pytest_llmjudge.cli.main import main
from pytest_llmjudge.reporting.results_file import load_results, validate

TWO = GOOD.replace(
    "cases:\n",
    "judge:\n  gate: lower_bound\ncases:\n  - id: says-fail\n    candidate_output: FAIL\n    label: fail\n",
).replace("threshold: 1.0", "threshold: 0.4")


def runs(suite: Suite) -> list:  # type: ignore[type-arg]
    return sorted((suite.root / ".llmjudge" / "runs").glob("*.json"))


def test_every_judged_run_writes_a_new_results_file_that_validates(suite: Suite) -> None:
    suite.benchmark("A-OK1", TWO)
    first = suite.run()
    second = suite.run()
    files = runs(suite)
    assert len(files) == 2  # never overwritten
    for path in files:
        assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{12}(-\d+)?\.json", path.name)
    shown = re.search(r"results file: (\S+)", first.stdout.str())
    assert shown and (suite.root / shown.group(1)).exists()
    first_file = (suite.root / shown.group(1)).resolve()
    (second_file,) = [path for path in files if path.resolve() != first_file]  # names may share a second
    assert re.search(r"results file: \S+", second.stdout.str())
    data = load_results(first_file)  # validates against the schema
    validate(data)
    (benchmark,) = data["benchmarks"]
    assert benchmark["judge"]["model"] == "function:fake-judge"
    assert len(benchmark["judge"]["instructions_digest"]) == 64
    assert benchmark["request"]["rubric"]
    assert benchmark["gate_rule"] == "lower_bound"
    gate = benchmark["gate"]
    assert (gate["passed"], gate["failed"], gate["interval_method"], gate["low_evidence"]) == (
        1,
        1,
        "wilson",
        True,
    )
    # the lower bound of 1 of 2 (9.5%) does not reach 0.4 although the pass rate (50%) does
    assert gate["status"] == "fail" and "lower bound" in gate["detail"]
    cases = {c["id"]: c for c in benchmark["cases"]}
    assert cases["says-fail"]["label"] == "fail"
    assert "FAIL" in cases["says-fail"]["request"]["output"]
    (sample,) = cases["says-hello"]["samples"]
    assert sample["pass"] is True and sample["input_tokens"] > 0
    assert data["exit_status"] == 1
    assert data["exit_reasons"] == ["gate A-OK1 failed: 95% lower bound 9.5% below 40.0%"]
    assert "exit status 1: gate A-OK1 failed: 95% lower bound 9.5% below 40.0%" in first.stdout.str()
    assert data["command"][0] == "pytest"
    assert data["totals"]["calls"] == 2 and load_results(second_file)["totals"]["cache_hits"] == 2


def test_no_results_file_without_judged_benchmarks(suite: Suite) -> None:
    suite.write("test_plain.py", "def test_nothing():\n    pass\n")
    result = suite.run()
    assert result.ret == 0
    assert not (suite.root / ".llmjudge" / "runs").exists()
    assert "results file" not in result.stdout.str()


def test_html_option_writes_the_report(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    result = suite.run("--llmjudge-results", "out/run.json", "--llmjudge-html", "out/report.html")
    assert result.ret == 0
    page = (suite.root / "out" / "report.html").read_text()
    assert "A-OK1" in page and "<html" in page.lower()
    assert "HTML report: out/report.html" in result.stdout.str()


def test_runs_show_and_report_commands(suite: Suite, capsys: pytest.CaptureFixture[str]) -> None:
    suite.benchmark("A-OK1", TWO)
    suite.run()
    suite.run()
    capsys.readouterr()
    assert main(["runs", "--rootdir", str(suite.root)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0].split()[:3] == ["started", "suite", "cases"]
    names = [line.split()[-1] for line in listing[1:]]
    started = [line.split()[0] for line in listing[1:]]
    assert started == sorted(started, reverse=True) and len(names) == 2  # newest first
    assert all(" fail " in line for line in listing[1:])
    path = str(runs(suite)[0])
    assert main(["show", path]) == 0
    shown = capsys.readouterr().out
    assert "A-OK1" in shown and "95% interval" in shown and "gate on the lower bound" in shown
    out = suite.root / "page.html"
    assert main(["report", path, "--baseline", str(runs(suite)[1]), "-o", str(out)]) == 0
    assert "A-OK1" in out.read_text()


def test_repeats_setting_reaches_the_results_file(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    suite.run("--llmjudge-results", "run.json", "--llmjudge-repeats", "3")
    data = json.loads((suite.root / "run.json").read_text())
    validate(data)
    assert data["settings"]["repeats"] == 3
    (case,) = data["benchmarks"][0]["cases"]
    assert len(case["samples"]) == 3 and case["stability"] == 1.0 and not case["flaky"]
    assert data["benchmarks"][0]["repeats"] == 3


def test_bad_option_values_name_their_source(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    result = suite.run("--llmjudge-repeats", "0")
    assert "--llmjudge-repeats: must be at least 1, not 0" in result.stderr.str()
    result = suite.run("--llmjudge-fail-on", "anything")
    assert "--llmjudge-fail-on: 'anything' is not one of regression" in result.stderr.str()


def test_results_file_from_xdist_workers(suite: Suite) -> None:
    pytest.importorskip("xdist")
    suite.benchmark("A-OK1", TWO)
    result = suite.run("-n", "2", "--llmjudge-results", "run.json")
    assert "results file: run.json" in result.stdout.str()
    data = load_results(suite.root / "run.json")
    assert {c["id"] for c in data["benchmarks"][0]["cases"]} == {"says-hello", "says-fail"}
    assert all(len(c["samples"]) == 1 for c in data["benchmarks"][0]["cases"])


def test_runs_lists_two_runs_of_the_same_second_newest_first(tmp_path: Path) -> None:
    from pytest_llmjudge.cli.main import main

    folder = tmp_path / ".llmjudge" / "runs"
    folder.mkdir(parents=True)
    names = [
        "20261123T103000Z-abcdef123456.json",  # first of that second
        "20261123T103000Z-abcdef123456-2.json",
        "20261123T103000Z-abcdef123456-3.json",
        "20261123T103001Z-abcdef123456.json",
    ]
    for name in names:
        (folder / name).write_text("{}")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["runs", "--rootdir", str(tmp_path)])
    listed = [name for line in out.getvalue().splitlines() for name in names if name in line]
    assert listed == list(reversed(names))
