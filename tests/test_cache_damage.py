"""A damaged cache entry is a miss, said in one warning line: the run produces or judges the case
again and never ends in a traceback; a cache whose folder cannot be made is one line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import Suite

from tests.test_task_step import task_calls, write_task_suite

CACHE = ".llmjudge/cache.sqlite"


def _update(suite: Suite, statement: str) -> None:
    with sqlite3.connect(suite.root / CACHE) as db:
        db.executescript(statement)


def _rerun_is_clean(suite: Suite, damage: str) -> str:
    """Damage the cache and run the suite again, twice (warnings as errors, then not): every case
    passes, no traceback; the output of the second run, for its warning lines."""
    _update(suite, damage)
    suite.run("benchmarks", "-W", "error").assert_outcomes(passed=4)  # a warning as an error: no crash
    _update(suite, damage)  # the first rerun wrote the entries again
    result = suite.run("benchmarks")
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    result.assert_outcomes(passed=4)
    return output


OUTPUT_DAMAGE = {
    "invalid JSON": "UPDATE outputs SET output = '{\"echo\": '",
    "deep nesting": "UPDATE outputs SET output = '" + "[" * 100_000 + "'",
    "null": "UPDATE outputs SET output = 'null'",
    "a list": "UPDATE outputs SET output = '[1, 2, 3]'",
    "a token count that is text": "UPDATE outputs SET input_tokens = 'x'",
    "a latency that is text": "UPDATE outputs SET latency = 'slow'",
}


@pytest.mark.parametrize("statement", OUTPUT_DAMAGE.values(), ids=OUTPUT_DAMAGE)
def test_a_damaged_stored_output_is_a_miss_with_one_warning(suite: Suite, statement: str) -> None:
    write_task_suite(suite)
    suite.run("benchmarks").assert_outcomes(passed=4)
    output = _rerun_is_clean(suite, statement)
    assert output.count("CacheDamageWarning: ") == 1, output
    assert "damaged produced-output entry" in output and "read as a miss, its task runs again" in output
    assert len(task_calls(suite)) == 3 + 3 + 3  # the damaged entries are produced again, each run


def test_an_outputs_table_of_another_layout_is_read_as_empty_with_one_warning(suite: Suite) -> None:
    write_task_suite(suite)
    suite.run("benchmarks").assert_outcomes(passed=4)
    other = "DROP TABLE outputs; CREATE TABLE outputs (key TEXT PRIMARY KEY, answer TEXT)"
    output = _rerun_is_clean(suite, other)
    assert output.count("CacheDamageWarning: ") == 1, output
    assert "its outputs table has the columns key, answer, not key, task," in output
    assert len(task_calls(suite)) == 9


def test_a_damaged_verdict_is_a_miss_judged_again_with_one_warning(suite: Suite) -> None:
    write_task_suite(suite)
    suite.run("benchmarks").assert_outcomes(passed=4)
    output = _rerun_is_clean(suite, "UPDATE verdicts SET input_tokens = 'x'")
    assert output.count("CacheDamageWarning: ") == 1, output
    assert "damaged verdict cache entry" in output and "input_tokens is 'x', not a count" in output
    assert len(suite.judge_calls()) == 3 + 3 + 3  # judged again, each run


def test_a_file_where_the_cache_folder_must_be_is_one_line(suite: Suite) -> None:
    write_task_suite(suite)
    (suite.root / ".llmjudge").write_text("not a folder\n")
    result = suite.run("benchmarks")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("ERROR")]
    assert errors == [
        f"ERROR: --llmjudge-cache-path: cannot make the folder of {suite.root / CACHE}: "
        f"{suite.root / '.llmjudge'} is a file, not a folder (move the file away, or point "
        "--llmjudge-cache-path elsewhere)"
    ], output
    assert task_calls(suite) == [] and suite.judge_calls() == []
    assert Path(suite.root / ".llmjudge").read_text() == "not a folder\n"
