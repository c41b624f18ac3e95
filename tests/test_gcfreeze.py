"""The collected suite is frozen out of the garbage collector's way, and nested runs thaw it."""

from __future__ import annotations

import gc

from conftest import GOOD, Suite

RECORDER = """
import gc


def pytest_sessionfinish(session):
    with open("freeze_count.txt", "w") as out:
        out.write(str(gc.get_freeze_count()))
"""


def freeze_count(suite: Suite) -> int:
    return int((suite.root / "freeze_count.txt").read_text())


def test_a_benchmark_run_freezes_what_collection_left(suite: Suite) -> None:
    suite.write("conftest.py", (suite.root / "conftest.py").read_text() + RECORDER)
    suite.benchmark("A-OK1", GOOD)
    result = suite.pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks")
    result.assert_outcomes(passed=2)
    assert freeze_count(suite) > 1000  # the collected items and the modules behind them


def test_a_run_without_benchmarks_leaves_the_collector_alone(suite: Suite) -> None:
    suite.write("conftest.py", (suite.root / "conftest.py").read_text() + RECORDER)
    suite.write("test_plain.py", "def test_plain():\n    assert True\n")
    result = suite.pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_plain.py")
    result.assert_outcomes(passed=1)
    assert freeze_count(suite) == 0


def test_a_run_inside_another_session_thaws_what_it_froze(suite: Suite) -> None:
    suite.write("conftest.py", (suite.root / "conftest.py").read_text() + RECORDER)
    suite.benchmark("A-OK1", GOOD)
    before = gc.get_freeze_count()
    suite.run("benchmarks").assert_outcomes(passed=2)
    assert freeze_count(suite) > before  # frozen while it ran
    assert gc.get_freeze_count() == before  # and handed back to this process's collector


def test_nothing_is_frozen_when_the_collector_is_off(suite: Suite) -> None:
    suite.write("conftest.py", (suite.root / "conftest.py").read_text() + RECORDER)
    suite.benchmark("A-OK1", GOOD)
    gc.disable()
    try:
        suite.run("benchmarks").assert_outcomes(passed=2)
    finally:
        gc.enable()
    assert freeze_count(suite) == gc.get_freeze_count()
