"""A run that exits 0 although cases failed (each within its benchmark's gate) ends on its exit
decision, below pytest's red final line; a run that exits 1 keeps its exit lines in the summary."""

from __future__ import annotations

import pytest

from tests.test_judging import bench, project, run, write

__all__ = ["project"]  # the fixture, shared with test_judging

GREEN, RED, RESET = "\x1b[32m", "\x1b[31m", "\x1b[0m"


def last_lines(result: pytest.RunResult, n: int = 2) -> list[str]:
    return [line for line in result.outlines if line.strip()][-n:]


def test_tolerated_failure_ends_on_the_exit_line_below_pytests_final_line(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=0.5)})
    result = run(project)
    assert result.ret == 0
    final, exit_line = last_lines(result)
    assert "1 failed, 2 passed" in final  # pytest's own line, red
    assert exit_line == (
        "llmjudge: exit status 0: 1 failing case(s) of B1 are within its gate (pass rate 50.0%, needs 50%)"
    )
    assert result.stdout.str().count("exit status 0") == 1  # not also in the summary, above the red line
    assert "FAILED benchmarks/B1.yaml::B1::c1" in result.stdout.str()  # the failure stays visible


def test_tolerated_exit_line_is_green_and_last(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=0.5)})
    result = run(project, "--color=yes")
    assert result.ret == 0
    final, exit_line = last_lines(result)
    assert final.startswith(RED) and "1 failed" in final
    assert exit_line == f"{GREEN}llmjudge: exit status 0: 1 failing case(s) of B1 are within its gate" + (
        f" (pass rate 50.0%, needs 50%){RESET}"
    )


def test_every_tolerating_benchmark_is_named_on_the_one_closing_line(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=0.5)})
    write(project, {"benchmarks/B2.yaml": bench("B2", ["PASS", "FAIL"], threshold=None)})
    result = run(project)
    assert result.ret == 0
    assert last_lines(result, 1) == [
        "llmjudge: exit status 0: 1 failing case(s) of B1 are within its gate (pass rate 50.0%, needs 50%); "
        "1 failing case(s) of B2 decide nothing: it is not scored (threshold: null)"
    ]


def test_failing_gate_keeps_its_exit_lines_in_the_summary(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "FAIL"], threshold=0.9)})
    result = run(project, "--color=yes")
    assert result.ret == 1
    lines = [line for line in result.outlines if line.strip()]
    exit_at = lines.index(f"{RED}exit status 1: gate B1 failed: pass rate 50.0% below 90.0%{RESET}")
    assert "short test summary info" in lines[exit_at + 1]
    assert lines[-1].startswith(RED) and "1 failed" in lines[-1]  # pytest's line stays last
    assert "llmjudge: exit status" not in result.stdout.str()


def test_passing_run_keeps_its_green_exit_line_in_the_summary(project: pytest.Pytester) -> None:
    write(project, {"benchmarks/B1.yaml": bench("B1", ["PASS", "PASS"], threshold=0.5)})
    result = run(project)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["exit status 0: no gate failed, no item failed or errored", "*3 passed*"])
    assert "llmjudge: exit status" not in result.stdout.str()
