"""Results files are untrusted input: reading one gives an error naming it, never a traceback or
a hang (the commands, and a run's ``--llmjudge-baseline``)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import GOOD, Suite
from reporting.results_factory import make_baseline, make_results

from pytest_llmjudge.cli.main import main
from pytest_llmjudge.reporting.results_file import ResultsFileError, validate

Results = dict[str, Any]


def _deep(depth: int) -> str:
    return '{"format": 1, "settings": ' + "[" * depth + "]" * depth + "}"


def _edited(edit: Callable[[Results], None]) -> str:
    results = make_results(20)
    edit(results)
    return json.dumps(results)


def _date(results: Results) -> None:
    results["finished"] = "2026-02-30T10:31:42Z"


def _nan(results: Results) -> None:
    results["benchmarks"][0]["gate"]["pass_rate"] = float("nan")


def _duplicate(results: Results) -> None:
    cases = results["benchmarks"][0]["cases"]
    cases.append(copy.deepcopy(cases[0]))


def _wide_digit(results: Results) -> None:
    results["started"] = "２０２６-11-23T10:30:00Z"  # full-width digits match \\d, not [0-9]


HOSTILE = {
    "deep": (_deep(100_000), "nested too deeply"),
    "deep under the parser's limit": (_deep(200), "nested deeper than 116 levels"),
    "long integer": (
        json.dumps(make_results(20)).replace('"exit_status": 1', '"exit_status": ' + "9" * 5000),
        "4300 digits",
    ),
    "impossible date": (_edited(_date), "$.finished: '2026-02-30T10:31:42Z' is not a real date"),
    "NaN rate": (_edited(_nan), "$.benchmarks[0].gate.pass_rate: NaN is not a number"),
    "duplicate case id": (_edited(_duplicate), "duplicate case id"),
    "full-width digits": (_edited(_wide_digit), "$.started: "),
}


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("command", ["show", "report", "compare", "baseline of report"])
def test_a_hostile_results_file_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, command: str
) -> None:
    text, message = HOSTILE[name]
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(make_results(20)), encoding="utf-8")
    page = str(tmp_path / "page.html")
    argv = {
        "show": ["show", str(bad)],
        "report": ["report", str(bad), "-o", page],
        "compare": ["compare", str(good), str(bad)],
        "baseline of report": ["report", str(good), "--baseline", str(bad), "-o", page],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}: ") and message in err, err
    assert not Path(page).exists()


def test_a_null_adjusted_p_value_is_shown_as_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = make_baseline(20)
    results = make_results(20, baseline=baseline)
    for row in results["comparison"]:
        row.update(p_value=None, p_adjusted=None)
    validate(results)  # null is valid by the schema: no test could be made
    path = tmp_path / "run.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    assert main(["show", str(path)]) == 0
    row = next(
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("  A-MED1 ") and "   -" in line
    )
    assert row.split()[5] == "-"  # the adjusted p column
    assert main(["report", str(path), "-o", str(tmp_path / "page.html")]) == 0


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command in a child process: a hang fails the test instead of stopping the suite."""
    code = "import sys; from pytest_llmjudge.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_or_a_device_is_refused_without_reading_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for target in (str(fifo), "/dev/zero"):
        done = _cli("show", target, cwd=tmp_path)
        assert (
            done.returncode == 2 and f"{target}: cannot read results file: not a regular file" in done.stderr
        )
    runs = tmp_path / ".llmjudge" / "runs"
    runs.mkdir(parents=True)
    os.mkfifo(runs / "20261123T103000Z-abcdef123456.json")
    (runs / "20261123T103001Z-abcdef123456.json").symlink_to("/dev/zero")
    (runs / "20261123T103002Z-abcdef123456-².json").write_text(json.dumps(make_results(20)), encoding="utf-8")
    done = _cli("runs", "--rootdir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and sum("not a regular file" in line for line in lines) == 2
    (listed,) = [line for line in lines if line.endswith("-².json")]
    assert listed.startswith("2026-11-23T10:30:00Z")  # read and listed, ordered as a plain name


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_baseline_is_a_usage_error_not_a_hang(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    os.mkfifo(suite.root / "base.json")
    result = suite.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--llmjudge-baseline", "base.json", timeout=120
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "base.json: cannot read results file: not a regular file" in result.stderr.str()
    assert suite.judge_calls() == []


def test_the_schema_refuses_nan_for_bounded_numbers_only() -> None:
    results = make_results(20)
    case = results["benchmarks"][0]["cases"][0]
    case["score"] = float("nan")  # unbounded: the report shows it as unknown
    validate(results)
    for where in ("ci_low", "pass_rate"):
        broken = copy.deepcopy(results)
        broken["benchmarks"][0]["gate"][where] = float("nan")
        with pytest.raises(ResultsFileError, match=rf"gate\.{where}: NaN is not a number"):
            validate(broken)
    broken = copy.deepcopy(results)
    broken["settings"]["alpha"] = float("nan")
    with pytest.raises(ResultsFileError, match=r"settings\.alpha: NaN"):
        validate(broken)


def test_a_calibration_case_may_share_its_id_with_a_release_case_but_not_with_another() -> None:
    results = make_results(20)
    cases = results["benchmarks"][0]["cases"]
    twin = copy.deepcopy(cases[0])
    twin["calibration"] = True
    cases.append(twin)
    validate(results)
    cases.append(copy.deepcopy(twin))
    with pytest.raises(ResultsFileError, match="duplicate calibration case id"):
        validate(results)
    results["benchmarks"][0]["cases"].pop()
    results["benchmarks"].append(copy.deepcopy(results["benchmarks"][0]))
    with pytest.raises(ResultsFileError, match=r"\$.benchmarks\[6\].code: duplicate benchmark code 'A-MED1'"):
        validate(results)
