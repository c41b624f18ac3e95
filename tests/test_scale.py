"""Run time that grows with the run's size: pytest's failure summary and the judging phase."""

from __future__ import annotations

import threading

import anyio.to_thread
import pytest
from conftest import JUDGE_CONFTEST

from pytest_llmjudge.execution.scheduler import Scheduler, Slots

COUNTING = """

_LOOKUPS = []


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    original = terminalreporter.getreports

    def counted(name):
        if name == "":
            _LOOKUPS.append(name)
        return original(name)

    terminalreporter.getreports = counted
    try:
        return (yield)
    finally:
        terminalreporter.write_line(f"passed-report scans: {len(_LOOKUPS)}")
"""


def test_the_failure_summary_scans_the_passed_reports_once_not_once_per_failure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest("import pytest\n" + JUDGE_CONFTEST + COUNTING)
    cases = "".join(
        f"  - {{id: c{i}, source_narrative: n, candidate_output: {'FAIL' if i % 2 else 'ok'}}}\n"
        for i in range(12)
    )
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: c\ninclusion_criteria: Apply always. Flag if wrong.\nthreshold: 0.1\ncases:\n"
        + cases
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:syrupy", "benchmarks")
    out = result.stdout.str()
    assert out.count("verdict: FAIL") == 6, out
    assert "passed-report scans: 1" in out, out


GETREPR_COUNTING = """
import _pytest._code.code as _code

_FORMATTED = []
_getrepr = _code.ExceptionInfo.getrepr


def _counted(self, *args, **kwargs):
    _FORMATTED.append(1)
    return _getrepr(self, *args, **kwargs)


_code.ExceptionInfo.getrepr = _counted


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"tracebacks formatted: {len(_FORMATTED)}")
"""


def test_a_judge_error_formats_no_traceback(pytester: pytest.Pytester) -> None:
    """A replay miss (or any judge ERROR) is its own short text: formatting pytest's traceback for
    it first cost 0.2 s per error, 55 s for 300 misses."""
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(JUDGE_CONFTEST + GETREPR_COUNTING)
    cases = "".join(f"  - {{id: c{i}, source_narrative: n, candidate_output: o{i}}}\n" for i in range(5))
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: c\ninclusion_criteria: Apply always. Flag if wrong.\nthreshold: 0.1\ncases:\n"
        + cases
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:syrupy", "--llmjudge-cache=replay", "benchmarks"
    )
    out = result.stdout.str()
    assert out.count("\njudge ERROR (cache-miss)") == 5, out
    assert "tracebacks formatted: 0" in out, out


def test_sync_calls_on_the_scheduler_reuse_worker_threads() -> None:
    """anyio hands a sync function to a worker thread kept alive for the loop's root task. Under
    ``run_forever`` there was none: each call scanned every pending task for one (quadratic in the
    run's size) and then tied a new thread to its own job, which stopped when that job ended."""
    scheduler: Scheduler[None] = Scheduler(concurrency=2)
    threads: set[threading.Thread] = set()  # held, so that no two calls can share an id by reuse

    async def job(slots: Slots) -> None:
        async with slots.hold():
            await anyio.to_thread.run_sync(lambda: threads.add(threading.current_thread()))

    keys = [f"k{n}" for n in range(60)]
    scheduler.start((key, job) for key in keys)
    try:
        for key in keys:
            scheduler.result(key)
    finally:
        scheduler.close()
    assert 1 <= len(threads) <= 2, len(threads)
    for thread in threads:  # stopped with the scheduler's root task
        thread.join(5)
        assert not thread.is_alive()


THREADS_COUNTING = """

_THREADS = set()
_judge_counted = judge


def judge(messages, info):
    _THREADS.add(threading.current_thread())
    return _judge_counted(messages, info)


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="fake-judge")


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"judge threads: {len(_THREADS)}")
"""


def test_a_sync_judge_hook_runs_in_as_many_threads_as_calls_in_flight(pytester: pytest.Pytester) -> None:
    """The README's ``def judge`` hook: 3,000 cases took 9 s and 12,000 took 61 s, a new thread and a
    scan of every pending task per call; now the threads are reused, at most one per call in flight."""
    pytester.makeini("[pytest]\n")
    pytester.makeconftest("import threading\n" + JUDGE_CONFTEST + THREADS_COUNTING)
    cases = "".join(f"  - {{id: c{i}, source_narrative: n, candidate_output: o{i}}}\n" for i in range(40))
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: c\ninclusion_criteria: Apply always. Flag if wrong.\nthreshold: 0.1\ncases:\n"
        + cases
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:syrupy",
        "--llmjudge-concurrency=2",
        "--llmjudge-repeats=2",
        "benchmarks",
    )
    out = result.stdout.str()
    assert result.ret == 0, out
    threads = int(out.split("judge threads: ", 1)[1].split()[0])
    assert 1 <= threads <= 2, out
