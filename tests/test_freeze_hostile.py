"""``llmjudge freeze`` reads an untrusted results file and writes into a folder it is given: it
writes only there, never through a planted link, says why it cannot write, and names the cases it
could not freeze."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Suite

from pytest_llmjudge.cli.main import main
from tests.test_task_step import write_task_suite

BROKEN_CASE = "  - {id: c3, source_narrative: boom}\n"  # the task raises for this narrative


def frozen_run(suite: Suite) -> Path:
    """A task suite's run (c0–c2 produced, c3 a task ERROR) and its results file."""
    write_task_suite(suite)
    path = suite.root / "benchmarks/a/T1.yaml"
    path.write_text(path.read_text() + BROKEN_CASE)
    suite.run("benchmarks", "--llmjudge-results=r.json").assert_outcomes(passed=4, errors=1)
    return suite.root / "r.json"


def freeze(suite: Suite, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run ``llmjudge freeze`` in the suite's folder: its exit status and what it printed."""
    status = main(["freeze", str(suite.root / "r.json"), "--rootdir", str(suite.root), *args])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_a_benchmark_code_that_leaves_the_folder_is_refused(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    results = frozen_run(suite)
    data = json.loads(results.read_text())
    data["benchmarks"][0]["code"] = "../../escaped"
    results.write_text(json.dumps(data))
    out = suite.root / "deep/frozen"
    status, printed = freeze(suite, capsys, "--out", str(out))
    assert status == 2
    assert "benchmark code '../../escaped' is not a benchmark code" in printed, printed
    assert not (suite.root / "escaped.jsonl").exists()
    assert list(suite.root.rglob("escaped*")) == []


def test_a_link_planted_at_a_temporary_name_is_never_followed(
    suite: Suite, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    frozen_run(suite)
    out = suite.root / "frozen"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (out / ".T1.jsonl.tmp").symlink_to(victim)
    status, printed = freeze(suite, capsys, "--out", str(out))
    assert status == 0, printed
    assert victim.read_text() == "keep me\n"
    frozen = (out / "T1.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in frozen] == ["c0", "c1", "c2"]
    assert sorted(p.name for p in out.iterdir()) == [".T1.jsonl.tmp", "T1.jsonl"]  # nothing else left


def test_an_out_that_is_a_file_or_a_forced_folder_is_one_line(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    frozen_run(suite)
    (suite.root / "taken").write_text("a file\n")
    status, printed = freeze(suite, capsys, "--out", str(suite.root / "taken"))
    assert status == 2 and "Traceback" not in printed
    assert f"llmjudge freeze: --out {suite.root / 'taken'}: not a folder" in printed, printed
    assert (suite.root / "taken").read_text() == "a file\n"
    (suite.root / "frozen/T1.jsonl").mkdir(parents=True)
    status, printed = freeze(suite, capsys, "--out", str(suite.root / "frozen"), "--force")
    assert status == 2 and "Traceback" not in printed
    folder = suite.root / "frozen/T1.jsonl"
    assert f"llmjudge freeze: cannot write {folder}: Is a directory" in printed, printed


def test_cases_whose_task_errored_are_named_not_dropped_silently(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    frozen_run(suite)
    status, printed = freeze(suite, capsys, "--out", str(suite.root / "frozen"))
    assert status == 0, printed
    assert (
        "llmjudge freeze: T1: 1 case(s) not frozen, the run has no output for them "
        "(their task errored, or did not run): c3"
    ) in printed
    frozen = (suite.root / "frozen/T1.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in frozen] == ["c0", "c1", "c2"]


def test_a_run_reads_back_the_deepest_output_its_suite_may_hold(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    """A case file may nest its values up to the YAML and JSON limit; the results file of its run
    then holds them a few levels deeper, and every command reads it."""
    deep: object = "hello"
    for _ in range(95):
        deep = {"k": deep}
    suite.benchmark(
        "D1",
        "code: D1\nconcept: The output says hello.\nthreshold: 1.0\n"
        "inclusion_criteria: Apply when there is output. Flag if it does not say hello.\n"
        "cases_file: data/cases.jsonl\n",
    )
    suite.write("data/cases.jsonl", json.dumps({"id": "c1", "candidate_output": deep}) + "\n")
    suite.run("benchmarks", "--llmjudge-results=r.json").assert_outcomes(passed=2)
    assert main(["show", str(suite.root / "r.json")]) == 0
    status, printed = freeze(suite, capsys, "--out", str(suite.root / "frozen"))
    assert status == 0, printed
    assert json.loads((suite.root / "frozen/D1.jsonl").read_text())["candidate_output"] == deep


def test_a_node_id_outside_the_root_is_never_read(
    suite: Suite, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    results = frozen_run(suite)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "T1.yaml").write_text((suite.root / "benchmarks/a/T1.yaml").read_text())
    data = json.loads(results.read_text())
    for case in data["benchmarks"][0]["cases"]:
        case["nodeid"] = f"{'../' * len(suite.root.parts)}{outside.relative_to('/')}/T1.yaml::{case['id']}"
    results.write_text(json.dumps(data))
    status, printed = freeze(suite, capsys, "--out", str(suite.root / "frozen"))
    assert status == 2 and "Traceback" not in printed, printed
    assert "outside the repository root" in printed and "not from this suite" in printed, printed
    assert not (suite.root / "frozen").exists()
