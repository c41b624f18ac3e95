"""The interval is of what is gated: with repeats, the gate's rate and its interval both count
the cases' reduced verdicts; corrected rates combine with the lower-bound rule, run-wide too."""

from __future__ import annotations

import json
import re

import pytest

from pytest_llmjudge.gating.statistics import wilson_interval
from tests.conftest import Suite
from tests.test_calibration_run import _benchmark, _calibration_lines
from tests.test_repeats import FLIP_CONFTEST, FLIPPY

# Samples: 5 + 3 + 0 + 3 of 20 pass (55%); reduced by majority, 3 of 4 cases pass (75%).
REPEATED = FLIPPY.replace("threshold: 0.5", "threshold: 0.3").replace(
    "judge:\n  repeats: 5\n", "judge:\n  repeats: 5\n  gate: lower_bound\n"
)


@pytest.fixture
def flip_suite(pytester: pytest.Pytester) -> Suite:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(FLIP_CONFTEST)
    return Suite(pytester)


def _gate_row(output: str, code: str) -> list[str]:
    table = output.split(" llmjudge gates ")[1].splitlines()
    line = next(line for line in table if line.startswith(f"{code} "))
    return re.split(r"\s{2,}", line.strip())


def test_with_repeats_the_interval_counts_the_gated_case_verdicts(flip_suite: Suite) -> None:
    flip_suite.benchmark("A-REP1", REPEATED)
    result = flip_suite.run("--llmjudge-results=run.json")
    output = result.stdout.str()
    low, high = wilson_interval(3, 4)  # 30.1%-95.4%: the lower bound reaches 0.3
    gate = json.loads((flip_suite.root / "run.json").read_text())["benchmarks"][0]["gate"]
    assert (gate["passed"], gate["failed"], gate["pass_rate"]) == (3, 1, 0.75)
    assert (gate["ci_low"], gate["ci_high"]) == pytest.approx((low, high))
    assert (gate["interval_method"], gate["basis"], gate["low_evidence"]) == ("wilson", "cases", True)
    # the rate over samples (55%) with an interval over samples failed this gate
    assert gate["status"] == "pass" and result.ret == 0, output
    row = _gate_row(output, "A-REP1")
    assert row[5:7] == ["75.0%", f"{low:.1%}–{high:.1%}"], row
    assert (
        f"A-REP1: pass rate 75.0% of 4 case verdicts (20 samples reduced per case), "
        f"95% interval {low:.1%}–{high:.1%}, low evidence, gate on the lower bound"
    ) in output
    assert "55.0%" not in output


def test_the_gated_interval_leaves_calibration_cases_out(suite: Suite) -> None:
    suite.write("data/CAL1.jsonl", _calibration_lines(), dedent=False)
    suite.benchmark("CAL1", _benchmark())
    output = suite.run().stdout.str()
    low, high = wilson_interval(14, 20)
    assert f"CAL1: pass rate 70.0% of 20 verdicts, 95% interval {low:.1%}–{high:.1%}" in output


@pytest.fixture
def calibrated(suite: Suite) -> Suite:
    suite.write("data/CAL1.jsonl", _calibration_lines(), dedent=False)
    return suite


def test_corrected_gate_works_run_wide(calibrated: Suite) -> None:
    calibrated.benchmark("CAL1", _benchmark(threshold=0.71))  # p 0.70, theta 0.714
    result = calibrated.run("--llmjudge-gate=corrected", "--llmjudge-results=run.json")
    output = result.stdout.str()
    assert result.ret == 0, output
    assert "corrected pass rate 0.714" in output
    benchmark = json.loads((calibrated.root / "run.json").read_text())["benchmarks"][0]
    assert benchmark["gate_rule"] == "corrected"
    calibrated.benchmark("CAL1", _benchmark(threshold=0.72))
    result = calibrated.run("--llmjudge-gate=corrected")
    assert result.ret == 1
    assert "gate CAL1 failed: corrected pass rate 0.714 below 0.72" in result.stdout.str()


def test_run_wide_corrected_gate_needs_a_calibration(suite: Suite) -> None:
    no_labels = _benchmark(threshold=0.5).replace("calibration_file: data/CAL1.jsonl\n", "")
    suite.benchmark("CAL1", no_labels)  # nothing to correct the pass rate with
    result = suite.run("--llmjudge-gate", "corrected")
    assert result.ret == 1
    assert "gate CAL1 failed: gate: corrected needs a calibration of this judge" in result.stdout.str()


def test_lower_bound_combines_with_the_corrected_rate(calibrated: Suite) -> None:
    calibrated.benchmark("CAL1", _benchmark("{gate: corrected_lower_bound}", threshold=0.71))
    result = calibrated.run("--llmjudge-results=run.json")
    output = result.stdout.str()
    data = json.loads((calibrated.root / "run.json").read_text())["benchmarks"][0]
    low = data["calibration"]["corrected_ci"][0]
    assert low < 0.71 < data["calibration"]["corrected_pass_rate"]
    # the corrected rate (0.714) reaches 0.71, the lower end of its interval does not
    assert result.ret == 1, output
    assert data["gate_rule"] == "corrected_lower_bound" and data["gate"]["status"] == "fail"
    reason = f"gate CAL1 failed: corrected pass rate 0.714, 95% lower bound {low:.3f} below 0.71"
    assert reason in output
    assert data["gate"]["detail"] in reason
    calibrated.benchmark("CAL1", _benchmark(threshold=round(low - 0.01, 2)))
    result = calibrated.run("--llmjudge-gate=corrected_lower_bound")
    assert result.ret == 0, result.stdout.str()
