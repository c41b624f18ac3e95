"""Output files at the end of a run: a file that cannot be written is a line, not a traceback;
files are written whole or not at all, merged under a lock, never over a source; relative paths
are from the directory pytest was run in."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import scipy.stats  # noqa: F401  (gate statistics import them in pytester runs: load them once)
import statsmodels.stats.proportion  # noqa: F401

from pytest_llmjudge.cli.main import main
from tests.test_judging import bench, project, run, write

__all__ = ["project"]  # the fixture, shared with test_judging

UNSURE = {"benchmarks/B1.yaml": bench("B1", ["PASS", "UNCERTAIN"], threshold=0.5)}


def _ended_cleanly(result: pytest.RunResult) -> str:
    """The run's output, after checking it reached its gate table and summary without a traceback."""
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    assert "llmjudge gates" in output, output
    return output


# -- 9. writing never crashes the end of a run --------------------------------------------------------


def test_a_review_file_that_is_a_folder_is_a_line_and_the_results_are_still_written(
    project: pytest.Pytester,
) -> None:
    write(project, UNSURE)
    (project.path / "review").mkdir()
    result = run(project, "--llmjudge-review-file=review", "--llmjudge-results=run.json")
    output = _ended_cleanly(result)
    assert (
        f"--llmjudge-review-file: cannot write {project.path / 'review'}: [Errno 21] Is a directory" in output
    )
    assert json.loads((project.path / "run.json").read_text())["totals"]["cases"] == 2
    assert result.ret == 0  # 1 of 2 passes, threshold 0.5: the gate decides, as without the review file


def test_a_calibration_store_in_the_way_of_a_file_is_a_line(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "UNCERTAIN"], threshold=0.5)})
    write(project, {"data/B1.jsonl": '{"id": "k0", "candidate_output": "PASS", "label": "pass"}\n'})
    text = (project.path / "benchmarks/B1.yaml").read_text()
    (project.path / "benchmarks/B1.yaml").write_text(
        text.replace("cases:", "calibration_file: data/B1.jsonl\ncases:")
    )
    (project.path / ".llmjudge").write_text("not a folder\n")  # the store, the review file, the runs
    result = run(project, "--llmjudge-cache=off", "--llmjudge-results=run.json")
    output = _ended_cleanly(result)
    assert "B1: cannot write " in output and "calibration" in output and "Not a directory" in output, output
    assert "--llmjudge-review-file: cannot write" in output
    data = json.loads((project.path / "run.json").read_text())
    assert data["benchmarks"][0]["calibration"]["n_labels"] == 1
    assert "cannot write" in data["benchmarks"][0]["calibration"]["detail"]


# -- 10. whole files, merged under a lock, never over a source ----------------------------------------

# A run that may write only so many bytes to a file from its session's end (a disk that fills up
# while the results are written); pytest's own output file keeps its room.
FULL_DISK = """
import os, resource, signal

def pytest_sessionfinish(session):
    if os.environ.get("FULL_DISK"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        room = os.path.getsize("stdout") + 20_000
        resource.setrlimit(resource.RLIMIT_FSIZE, (room, resource.RLIM_INFINITY))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE and SIGXFSZ")
def test_a_results_file_is_written_whole_or_not_at_all(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text() + textwrap.dedent(FULL_DISK))
    long = "PASS " + "x" * 1000
    write(project, {"benchmarks/B1.yaml": bench("B1", [long] * 40, threshold=0.5)})
    args = ("benchmarks", "-p", "no:syrupy", "-p", "no:cacheprovider", "--llmjudge-results=run.json")
    assert project.runpytest_subprocess(*args).ret == 0
    whole = (project.path / "run.json").read_text()
    assert len(whole) > 40_000
    monkeypatch.setenv("FULL_DISK", "1")
    result = project.runpytest_subprocess(*args, "--llmjudge-cache=off")
    output = _ended_cleanly(result)
    assert (
        f"--llmjudge-results: cannot write {project.path / 'run.json'}: [Errno 27] File too large" in output
    )
    assert (project.path / "run.json").read_text() == whole  # the earlier file, not half of this one
    assert [p.name for p in project.path.glob(".run.json*")] == []  # no temporary file left


def test_results_html_and_review_file_never_write_over_a_source(project: pytest.Pytester) -> None:
    write(project, UNSURE)
    benchmark = (project.path / "benchmarks/B1.yaml").read_text()
    conftest = (project.path / "conftest.py").read_text()
    result = run(
        project,
        "--llmjudge-results=benchmarks/B1.yaml",
        "--llmjudge-html=conftest.py",
        "--llmjudge-review-file=conftest.py",
    )
    output = _ended_cleanly(result)
    path = project.path
    assert (
        f"--llmjudge-results: cannot write {path / 'benchmarks/B1.yaml'}: it is a benchmark file "
        "(pass --llmjudge-overwrite to write over it)"
    ) in output
    assert f"--llmjudge-html: cannot write {path / 'conftest.py'}: it is a Python file" in output
    assert f"--llmjudge-review-file: cannot write {path / 'conftest.py'}: it is a Python file" in output
    assert (path / "benchmarks/B1.yaml").read_text() == benchmark
    assert (path / "conftest.py").read_text() == conftest
    assert not (path / ".conftest.py.lock").exists()


def test_the_overwrite_flag_writes_over_a_python_file(project: pytest.Pytester) -> None:
    write(project, UNSURE)
    (project.path / "report.py").write_text("# an old name for the report\n")
    result = run(project, "--llmjudge-html=report.py", "--llmjudge-overwrite")
    _ended_cleanly(result)
    assert (project.path / "report.py").read_text().startswith("<!DOCTYPE html>")


def test_a_results_file_never_replaces_the_baseline_it_is_compared_with(project: pytest.Pytester) -> None:
    write(project, UNSURE)
    run(project, "--llmjudge-results=base.json")
    before = (project.path / "base.json").read_text()
    result = run(project, "--llmjudge-baseline=base.json", "--llmjudge-results=base.json")
    assert "it is the baseline results file" in _ended_cleanly(result)
    assert (project.path / "base.json").read_text() == before


def test_report_command_refuses_to_write_over_its_input(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project, UNSURE)
    run(project, "--llmjudge-results=r.json")
    results = project.path / "r.json"
    before = results.read_text()
    capsys.readouterr()
    assert main(["report", str(results), "-o", str(results)]) == 2
    error = capsys.readouterr().err
    assert f"llmjudge report: cannot write {results}: it is the results file the report is made from" in error
    assert "--force" in error
    assert results.read_text() == before
    conftest = project.path / "conftest.py"
    assert main(["report", str(results), "-o", str(conftest)]) == 2
    assert "it is a Python file" in capsys.readouterr().err
    assert main(["report", str(results), "-o", str(results), "--force"]) == 0
    assert results.read_text().startswith("<!DOCTYPE html>")


# Each writer adds entries of its own, one per round: a lost update loses an entry for good.
SHARD = """
import sys
from pathlib import Path
from pytest_llmjudge.gating.records import CaseRecord
from pytest_llmjudge.reporting.review import write_review_file

shard, rounds, path = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
for i in range(rounds):
    nodeid = f"benchmarks/{shard}.yaml::{shard}::c{i}"
    write_review_file(path, [CaseRecord(shard, f"c{i}", "fail", nodeid=nodeid, uncertain=True)])
"""


def test_parallel_runs_merge_the_review_file_without_losing_entries(tmp_path: Path) -> None:
    path, shards, rounds = tmp_path / ".llmjudge" / "review.json", 6, 15
    script = tmp_path / "shard.py"
    script.write_text(SHARD)
    writers = [
        subprocess.Popen(
            [sys.executable, str(script), f"S{n}", str(rounds), str(path)], stderr=subprocess.PIPE
        )
        for n in range(shards)
    ]
    errors = [writer.communicate(timeout=60)[1].decode() for writer in writers]
    assert [writer.returncode for writer in writers] == [0] * shards, errors
    cases = json.loads(path.read_text())["cases"]
    assert sorted(f"{c['benchmark']}::{c['case']}" for c in cases) == sorted(
        f"S{n}::c{i}" for n in range(shards) for i in range(rounds)
    )


# -- 12. relative output paths are from the directory pytest was run in -------------------------------


def test_relative_output_paths_are_from_the_directory_pytest_runs_in(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, UNSURE)
    here = project.path / "sub"
    here.mkdir()
    monkeypatch.chdir(here)
    result = project.runpytest_inprocess(
        str(project.path / "benchmarks"),
        "-p",
        "no:syrupy",
        "-p",
        "no:cacheprovider",
        "--llmjudge-results=run.json",
        "--llmjudge-html=run.html",
        "--llmjudge-review-file=review.json",
    )
    _ended_cleanly(result)
    assert sorted(p.name for p in here.iterdir() if not p.name.startswith(".")) == [
        "review.json",
        "run.html",
        "run.json",
    ]
    assert not (project.path / "run.json").exists()
    assert "results file: run.json" in result.stdout.str()  # from where pytest ran
    # the environment is the shell's too; the ini file's paths and the defaults are the rootdir's
    monkeypatch.setenv("LLMJUDGE_RESULTS", "from-env.json")
    project.runpytest_inprocess(str(project.path / "benchmarks"), "-p", "no:syrupy", "-p", "no:cacheprovider")
    assert (here / "from-env.json").is_file()
    monkeypatch.delenv("LLMJUDGE_RESULTS")
    project.makeini("[pytest]\nllmjudge_results = from-ini.json\n")
    project.runpytest_inprocess(str(project.path / "benchmarks"), "-p", "no:syrupy", "-p", "no:cacheprovider")
    assert (project.path / "from-ini.json").is_file()
    assert (project.path / ".llmjudge/review.json").is_file()


def test_help_says_where_relative_output_paths_go(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    assert result.ret == 0
    text = " ".join(result.stdout.str().split())
    for option in ("--llmjudge-results", "--llmjudge-html", "--llmjudge-review-file"):
        help_text = text.split(f"{option}={option[2:].upper().replace('-', '_')}", 1)[1][:400]
        assert "a relative path is from the directory pytest runs in" in help_text, help_text
    assert "--llmjudge-overwrite" in text
