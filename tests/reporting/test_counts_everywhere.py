"""One count, rendered everywhere: the terminal, the results file, the HTML report and
``llmjudge show`` agree on model calls, gates, rubrics and exit reasons."""

from __future__ import annotations

import json

import pytest

from pytest_llmjudge.cli.main import main
from tests.conftest import GOOD, Suite

JUDGED = GOOD.replace("A-OK1", "A-JUDGED").replace("threshold: 1.0", "threshold: 0.9")
JUDGED = (
    JUDGED.split("cases:")[0]
    + "cases:\n"
    + "".join(f"  - id: case-{i}\n    candidate_output: {'FAIL' if i == 0 else 'hello'}\n" for i in range(8))
)
CODE = """\
code: B-CODE
concept: The output says hello.
threshold: 1.0
evaluator_type: code
checks: [{type: contains, value: hello}]
cases:
  - {id: one, candidate_output: hello there}
  - {id: two, candidate_output: hello}
"""
RUBRIC = (
    "code: R\naggregation_method: MINIMUM\npassing_threshold: 0.95\nbenchmarks:\n  - A-JUDGED\n  - B-CODE\n"
)


def _table(text: str, first: str) -> list[str]:
    """The rows of the table whose header starts with ``first``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_the_terminal_the_results_file_the_report_and_show_count_alike(
    suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    suite.benchmark("A-JUDGED", JUDGED)
    suite.benchmark("B-CODE", CODE)
    suite.write("rubrics/R.yaml", RUBRIC)
    result = suite.run("benchmarks", "--llmjudge-results=run.json", "--llmjudge-html=report.html")
    terminal = result.stdout.str()
    assert result.ret == 1, terminal
    assert "judge: 8 verdict(s), 8 model call(s), 0 cache hit(s)" in terminal  # code checks call none
    data = json.loads((suite.root / "run.json").read_text())
    assert (data["totals"]["cases"], data["totals"]["calls"]) == (10, 8)
    assert "<b>8</b> judge calls" in (suite.root / "report.html").read_text()

    capsys.readouterr()
    assert main(["show", str(suite.root / "run.json")]) == 0
    shown = capsys.readouterr().out
    assert "10 case(s): 9 passed, 1 failed" in shown and "8 model call(s)" in shown
    # the same tables as the terminal: thresholds as percentages, the failed rubric gate
    assert _table(shown, "benchmark ") == _table(terminal, "benchmark ")
    thresholds = {row.split()[0]: row.split()[7] for row in _table(shown, "benchmark ")[2:]}
    assert thresholds == {"A-JUDGED": "90.0%", "B-CODE": "100%"}
    assert _table(shown, "rubric ") == _table(terminal, "rubric ")
    assert "R       MINIMUM      0.875  0.95       FAIL  score 0.875 below 0.95" in shown
    # and the exit reasons, as the terminal ends
    assert shown.rstrip().endswith(
        "exit status 1:\n  - gate A-JUDGED failed: pass rate 87.5% below 90.0%\n"
        "  - rubric R failed: score 0.875 below 0.95"
    )


def test_the_no_model_error_counts_every_case_that_needs_a_judge(bare_suite: Suite) -> None:
    bare_suite.write("mytask.py", "def run(case):\n    return 'hello'\n")
    bare_suite.benchmark(
        "A-TASK",
        GOOD.replace("A-OK1", "A-TASK").split("cases:")[0]
        + "task: mytask:run\ncases:\n  - id: one\n  - id: two\n  - id: three\n",
    )
    bare_suite.benchmark("A-OK1", GOOD)
    bare_suite.benchmark("B-CODE", CODE)  # checks need no judge
    bare_suite.pytester.syspathinsert()
    result = bare_suite.run("benchmarks")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "4 case(s) need a judge model and none is configured" in result.stderr.str()
