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
        assert not gc.isenabled()  # the user's choice stays
    finally:
        gc.enable()
    assert freeze_count(suite) == gc.get_freeze_count()


COLLECTOR_WATCH = """
import gc
import weakref


class Cycle:
    pass


seen = {}


def pytest_itemcollected(item):
    seen.setdefault("collecting", gc.isenabled())
    if "garbage" not in seen:  # a reference cycle nothing else holds, made while collecting
        cycle = Cycle()
        cycle.self = cycle
        seen["garbage"] = weakref.ref(cycle)
        del cycle


def pytest_runtest_setup(item):
    seen.setdefault("running", gc.isenabled())
    seen.setdefault("garbage_alive", seen["garbage"]() is not None)


def pytest_sessionfinish(session):
    with open("collector.txt", "w") as out:
        out.write(" ".join(f"{k}={v}" for k, v in sorted(seen.items()) if k != "garbage"))
"""


def test_the_collector_is_off_while_a_suite_is_collected_and_its_garbage_is_not_frozen(suite: Suite) -> None:
    suite.write("conftest.py", (suite.root / "conftest.py").read_text() + COLLECTOR_WATCH)
    suite.benchmark("A-OK1", GOOD)
    result = suite.pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks")
    result.assert_outcomes(passed=2)
    watched = (suite.root / "collector.txt").read_text()
    assert watched == "collecting=False garbage_alive=False running=True"


def test_a_run_without_benchmarks_collects_with_the_collector_on(suite: Suite) -> None:
    suite.write("conftest.py", (suite.root / "conftest.py").read_text() + COLLECTOR_WATCH)
    suite.write("test_plain.py", "def test_plain():\n    assert True\n")
    result = suite.pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_plain.py")
    result.assert_outcomes(passed=1)
    watched = (suite.root / "collector.txt").read_text().split()
    assert "collecting=True" in watched and "running=True" in watched


def test_the_collector_is_back_on_after_a_collect_only_or_broken_run(suite: Suite) -> None:
    suite.benchmark("A-OK1", GOOD)
    assert gc.isenabled()
    suite.run("benchmarks", "--collect-only")
    assert gc.isenabled()
    suite.write("benchmarks/B-BAD1.yaml", "code: [unclosed\n")
    suite.run("benchmarks")
    assert gc.isenabled()
