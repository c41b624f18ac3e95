"""Judge calibration in a run: labelled cases, agreement figures, corrected pass rate, trust gate
and stored calibrations that follow the judge.

The fake judge (tests/conftest.py) fails a case exactly when its candidate output contains
"FAIL", so the confusion matrix is chosen by the data: 45/5 on human-pass, 10/40 on human-fail.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from statsmodels.stats.proportion import proportion_confint  # type: ignore[import-untyped]

from tests.conftest import Suite

TP, FN, FP, TN = 45, 5, 10, 40
UNLABELLED_PASS, UNLABELLED_FAIL = 14, 6  # p = 0.7


def _calibration_lines() -> str:
    rows = []
    for i in range(TP):
        rows.append({"id": f"hp-{i}", "candidate_output": "good", "label": "pass"})
    for i in range(FN):
        rows.append({"id": f"hp-miss-{i}", "candidate_output": "FAIL", "label": "pass"})
    for i in range(FP):
        rows.append({"id": f"hf-miss-{i}", "candidate_output": "good", "label": "fail"})
    for i in range(TN):
        rows.append({"id": f"hf-{i}", "candidate_output": "FAIL", "label": "fail"})
    return "".join(json.dumps(row) + "\n" for row in rows)


def _benchmark(judge: str = "", threshold: float = 0.5, concept: str = "The output is good.") -> str:
    cases = [f"  - {{id: ok-{i}, candidate_output: good}}" for i in range(UNLABELLED_PASS)]
    cases += [f"  - {{id: bad-{i}, candidate_output: FAIL}}" for i in range(UNLABELLED_FAIL)]
    lines = [
        "code: CAL1",
        f"concept: {concept}",
        f"threshold: {threshold}",
        "inclusion_criteria: Apply when there is output. Flag if it is not good.",
        "calibration_file: data/CAL1.jsonl",
        *([f"judge: {judge}"] if judge else []),
        "cases:",
        *cases,
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def calibrated(suite: Suite) -> Suite:
    suite.write("data/CAL1.jsonl", _calibration_lines(), dedent=False)
    suite.benchmark("CAL1", _benchmark())
    return suite


def _row(output: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith("CAL1  ") and "[" in line)
    return re.split(r"\s{2,}", line.strip())


def _ci(hits: int, total: int) -> str:
    low, high = proportion_confint(hits, total, method="wilson")
    return f"[{low:.2f}, {high:.2f}]"


def test_known_confusion_matrix_gives_its_figures(calibrated: Suite) -> None:
    junit = calibrated.root / "junit.xml"
    result = calibrated.run(f"--junitxml={junit}")
    output = result.stdout.str()
    # 15 disagreements fail their items, but do not decide the exit status: the gate passes
    assert result.ret == 0, output
    result.assert_outcomes(passed=1 + UNLABELLED_PASS + TP + TN, failed=UNLABELLED_FAIL + FN + FP)
    row = _row(output)
    tpr, tnr = TP / (TP + FN), TN / (TN + FP)
    n = TP + FN + TN + FP
    observed = (TP + TN) / n
    chance = ((TP + FN) / n) * ((TP + FP) / n) + ((TN + FP) / n) * ((TN + FN) / n)
    kappa = (observed - chance) / (1 - chance)
    p = UNLABELLED_PASS / (UNLABELLED_PASS + UNLABELLED_FAIL)
    theta = (p + tnr - 1) / (tpr + tnr - 1)
    assert (tpr, tnr, round(kappa, 12)) == (0.9, 0.8, 0.7)
    assert row[:6] == [
        "CAL1",
        "100",
        f"{tpr:.2f} {_ci(TP, TP + FN)}",
        f"{tnr:.2f} {_ci(TN, TN + FP)}",
        f"{(tpr + tnr) / 2:.2f}",
        f"{kappa:.2f}",
    ]
    corrected = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", row[6])
    assert corrected is not None
    assert corrected.group(1) == f"{theta:.3f}" == "0.714"
    assert float(corrected.group(2)) <= theta <= float(corrected.group(3))
    assert row[7] == "-"  # no minimums: nothing to trust or refuse
    # the disagreements, each with both verdicts and the judge's reason
    assert "judge and human disagree (15):" in output
    assert (
        "CAL1::hp-miss-0 at data/CAL1.jsonl:46: human pass, judge fail: the candidate output is marked FAIL"
        in output
    )
    assert "calibration: human label fail, judge pass" in output
    xml = junit.read_text()
    item = re.search(r'<testcase classname="[^"]*\.calibration" name="hf-miss-0".*?</testcase>', xml, re.S)
    assert item is not None
    assert '<property name="llmjudge_verdict" value="pass"' in item.group(0)
    assert '<property name="llmjudge_label" value="fail"' in item.group(0)
    assert '<property name="llmjudge_agrees" value="false"' in item.group(0)


def test_a_judge_below_its_minimum_is_untrusted_whatever_the_pass_rate(calibrated: Suite) -> None:
    calibrated.benchmark("CAL1", _benchmark("{min_tpr: 0.95, min_tnr: 0.8, min_labels: 30}"))
    result = calibrated.run()
    output = result.stdout.str()
    assert result.ret == 1, output
    assert re.search(r"^CAL1 .*untrusted", output, re.M), output
    assert "judge untrusted: TPR 0.90 < 0.95 (45/50), 100 labels" in output
    assert _row(output)[7] == "no"


def test_run_wide_minimums_come_from_the_command_line(calibrated: Suite) -> None:
    result = calibrated.run("--llmjudge-min-labels", "101")
    assert result.ret == 1
    assert "judge untrusted: 100 labels < 101" in result.stdout.str()
    assert calibrated.run("--llmjudge-min-tpr", "0.9", "--llmjudge-min-tnr", "0.8").ret == 0


def test_corrected_gate_compares_the_corrected_rate(calibrated: Suite) -> None:
    calibrated.benchmark("CAL1", _benchmark("{gate: corrected}", threshold=0.71))  # p 0.70, theta 0.714
    result = calibrated.run()
    assert result.ret == 0, result.stdout.str()
    assert "corrected pass rate 0.714" in result.stdout.str()
    calibrated.benchmark("CAL1", _benchmark("{gate: corrected}", threshold=0.72))
    assert calibrated.run().ret == 1


def test_labels_of_one_class_say_which_rate_is_unknown_not_chance(suite: Suite) -> None:
    rows = [{"id": f"hp-{i}", "candidate_output": "good", "label": "pass"} for i in range(10)]
    suite.write("data/CAL1.jsonl", "".join(json.dumps(row) + "\n" for row in rows), dedent=False)
    suite.benchmark("CAL1", _benchmark("{gate: corrected}"))
    result = suite.run()
    output = result.stdout.str()
    assert result.ret == 1, output
    assert "no case labelled fail: TNR unknown, label failing cases too" in output, output
    assert (
        "CAL1: no case labelled fail: TNR unknown, label failing cases too: no corrected pass rate" in output
    )
    assert "no better than chance" not in output


def test_stored_calibration_follows_the_judge(calibrated: Suite) -> None:
    assert calibrated.run().ret == 0
    stored = list((calibrated.root / ".llmjudge" / "calibration").glob("CAL1-*.json"))
    assert len(stored) == 1
    # no labelled case judged: the stored calibration of the same judge is reused, and says so
    result = calibrated.run("-k", "not llmjudge_labelled")
    output = result.stdout.str()
    assert "reused the stored calibration of this judge" in output, output
    assert _row(output)[:2] == ["CAL1", "100"]
    # a changed prompt is another judge: the stored calibration no longer applies
    calibrated.benchmark("CAL1", _benchmark(concept="The output is very good."))
    result = calibrated.run("-k", "not llmjudge_labelled")
    assert "calibration is for another judge" in result.stdout.str()
    assert "reused" not in result.stdout.str()


def test_calibration_case_without_label_is_an_error(suite: Suite) -> None:
    suite.write("data/CAL1.jsonl", '{"id": "a", "candidate_output": "good"}\n', dedent=False)
    suite.benchmark("CAL1", _benchmark())
    result = suite.run()
    assert result.ret != 0
    assert "data/CAL1.jsonl:1:1: label: calibration case 'a' has no human label" in result.stdout.str()


def test_calibrate_command_judges_only_labelled_cases(calibrated: Suite) -> None:
    calibrated.benchmark("CAL1", _benchmark("{min_tpr: 0.95}"))
    command = [sys.executable, "-m", "pytest_llmjudge.cli.main", "calibrate", "benchmarks"]
    done = subprocess.run(command, cwd=calibrated.root, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert re.split(r"\s{2,}", lines[2]) == [
        "CAL1",
        "100",
        f"0.90 {_ci(TP, TP + FN)}",
        f"0.80 {_ci(TN, TN + FP)}",
        "0.85",
        "0.70",
        "no",
    ]
    assert "judge and human disagree (15):" in done.stdout
    assert "CAL1: below its minimums: judge untrusted: TPR 0.90 < 0.95 (45/50), 100 labels" in done.stdout
    assert len(calibrated.judge_calls()) == TP + FN + FP + TN  # the unlabelled cases were not judged
    calibrated.benchmark("CAL1", _benchmark("{min_tpr: 0.9}"))
    done = subprocess.run(command, cwd=calibrated.root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "CAL1: meets its minimums: judge trusted: TPR 0.90 (45/50), TNR 0.80 (40/50), 100 labels"
        in done.stdout
    )


def test_results_file_carries_the_calibration(calibrated: Suite) -> None:
    import jsonschema

    from pytest_llmjudge.reporting.results_file import SCHEMA_PATH

    calibrated.benchmark("CAL1", _benchmark("{min_tpr: 0.95}"))
    assert calibrated.run("--llmjudge-results=run.json").ret == 1
    data = json.loads((calibrated.root / "run.json").read_text())
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))
    (benchmark,) = data["benchmarks"]
    assert benchmark["gate"]["status"] == "untrusted"
    calibration = benchmark["calibration"]
    assert (calibration["tp"], calibration["fn"], calibration["tn"], calibration["fp"]) == (TP, FN, TN, FP)
    assert (calibration["tpr"], calibration["tnr"], calibration["trusted"]) == (0.9, 0.8, False)
    assert calibration["source"] == "run"
    assert sum(1 for case in benchmark["cases"] if case["calibration"]) == TP + FN + TN + FP
