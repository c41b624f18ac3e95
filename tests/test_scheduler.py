"""The scheduler: bounded concurrency, order, cancellation; and how a run uses it (pytester)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from interrupts import ctrl_c_restored

from pytest_llmjudge.execution.scheduler import Progress, RatePacer, Scheduler, Slots

# -- the scheduler on its own ---------------------------------------------------------------


def test_in_flight_never_exceeds_the_bound() -> None:
    scheduler: Scheduler[int] = Scheduler(concurrency=3)
    current = peak = 0

    def job(number: int):  # type: ignore[no-untyped-def]
        async def run(slots: Slots) -> int:
            nonlocal current, peak
            async with slots.hold():
                current += 1
                peak = max(peak, current)
                await asyncio.sleep(0.005)
                current -= 1
            return number

        return run

    scheduler.start((f"k{n}", job(n)) for n in range(20))
    try:
        assert [scheduler.result(f"k{n}") for n in range(20)] == list(range(20))
    finally:
        scheduler.close()
    assert peak == 3
    assert scheduler.progress.max_in_flight == 3
    assert (scheduler.progress.done, scheduler.progress.in_flight, scheduler.progress.queued) == (20, 0, 0)


def test_jobs_take_slots_in_the_order_they_were_scheduled() -> None:
    scheduler: Scheduler[None] = Scheduler(concurrency=1)
    started: list[int] = []

    def job(number: int):  # type: ignore[no-untyped-def]
        async def run(slots: Slots) -> None:
            async with slots.hold():
                started.append(number)
                await asyncio.sleep(0)

        return run

    scheduler.start((f"k{n}", job(n)) for n in range(10))
    scheduler.start((f"k{n}", job(n)) for n in range(10, 15))
    try:
        for n in range(15):
            scheduler.result(f"k{n}")
    finally:
        scheduler.close()
    assert started == list(range(15))


def test_a_key_is_scheduled_once() -> None:
    scheduler: Scheduler[str] = Scheduler(concurrency=4)
    runs: list[str] = []

    def job(label: str):  # type: ignore[no-untyped-def]
        async def run(slots: Slots) -> str:
            runs.append(label)
            return label

        return run

    scheduler.start([("same", job("first"))])
    scheduler.start([("same", job("second"))])
    try:
        assert scheduler.result("same") == "first"
    finally:
        scheduler.close()
    assert runs == ["first"]


def test_result_reraises_what_the_job_raised() -> None:
    scheduler: Scheduler[None] = Scheduler(concurrency=1)

    async def broken(slots: Slots) -> None:
        raise ValueError("no verdict")

    scheduler.start([("k", broken)])
    try:
        with pytest.raises(ValueError, match="no verdict"):
            scheduler.result("k")
    finally:
        scheduler.close()


def test_cancel_pending_stops_running_and_queued_jobs_quickly() -> None:
    scheduler: Scheduler[None] = Scheduler(concurrency=2)
    started: list[int] = []
    cleaned: list[int] = []

    def job(number: int):  # type: ignore[no-untyped-def]
        async def run(slots: Slots) -> None:
            async with slots.hold():
                started.append(number)
                try:
                    await asyncio.sleep(30)
                finally:
                    cleaned.append(number)

        return run

    scheduler.start((f"k{n}", job(n)) for n in range(10))
    deadline = time.monotonic() + 5
    while len(started) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    began = time.monotonic()
    assert scheduler.cancel_pending() == 10
    scheduler.close()
    assert time.monotonic() - began < 2
    assert sorted(started) == [0, 1]
    assert sorted(cleaned) == [0, 1]  # running jobs unwound (their finally blocks ran)
    with pytest.raises(concurrent.futures.CancelledError):
        scheduler.result("k5")


def test_close_runs_finalizers_once_the_loop_has_stopped() -> None:
    scheduler: Scheduler[int] = Scheduler(concurrency=1)
    events: list[str] = []

    async def job(slots: Slots) -> int:
        events.append(f"job in {threading.current_thread().name}")
        return 1

    scheduler.on_close(lambda: events.append(f"finalizer in {threading.current_thread().name}"))
    scheduler.start([("k", job)])
    assert scheduler.result("k") == 1
    scheduler.close()
    scheduler.close()
    assert events == ["job in llmjudge-scheduler", f"finalizer in {threading.current_thread().name}"]


def test_tally_counts_what_finished_jobs_return() -> None:
    def tally(result: str, progress: Progress) -> None:
        progress.errors += result == "error"

    scheduler: Scheduler[str] = Scheduler(concurrency=2, tally=tally)

    def job(result: str):  # type: ignore[no-untyped-def]
        async def run(slots: Slots) -> str:
            return result

        return run

    scheduler.start([("a", job("ok")), ("b", job("error")), ("c", job("error"))])
    try:
        for key in "abc":
            scheduler.result(key)
    finally:
        scheduler.close()
    assert (scheduler.progress.total, scheduler.progress.done, scheduler.progress.errors) == (3, 3, 2)


def test_rate_pacer_spaces_request_starts() -> None:
    now = [100.0]
    pacer = RatePacer(rpm=60, clock=lambda: now[0])
    assert [pacer.delay() for _ in range(3)] == [0.0, 1.0, 2.0]
    now[0] += 10
    assert pacer.delay() == 0.0


def test_back_off_holds_every_request_start() -> None:
    now = [0.0]
    pacer = RatePacer(rpm=None, clock=lambda: now[0])
    assert pacer.delay() == 0.0
    pacer.pause(2.5)
    assert pacer.delay() == 2.5
    assert pacer.delay() == 2.5  # not just the call that was told
    now[0] = 3.0
    assert pacer.delay() == 0.0


# -- in a pytest run --------------------------------------------------------------------------

# A judge that sleeps as long as the case asks ("SLEEP 0.05"), fails cases marked FAIL, logs each
# call and the most calls it ever had in flight at once.
SLEEPY_CONFTEST = """
import asyncio
import re
from pathlib import Path

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
HERE = Path(__file__).parent
STATE = {"now": 0, "peak": 0}


async def judge(messages, info):
    texts = [getattr(p, "content", None) for m in messages for p in m.parts]
    prompt = "".join(t for t in texts if isinstance(t, str))
    output = re.search(r"<Output>\\n(.*?)\\n</Output>", prompt, re.S).group(1)
    with (HERE / "calls.log").open("a") as log:
        log.write(output + "\\n")
    STATE["now"] += 1
    STATE["peak"] = max(STATE["peak"], STATE["now"])
    (HERE / "peak.txt").write_text(str(STATE["peak"]))
    try:
        found = re.search(r"SLEEP ([0-9.]+)", output)
        await asyncio.sleep(float(found.group(1)) if found else 0)
    finally:
        STATE["now"] -= 1
    args = {"pass": "FAIL" not in output, "reason": "judged on the candidate output"}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="sleepy")
"""


def sleepy_project(pytester: pytest.Pytester, outputs: list[str], code: str = "B-SLEEP") -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(SLEEPY_CONFTEST)
    cases = "\n".join(
        f"  - id: c{i:02d}\n    candidate_output: {output!r}" for i, output in enumerate(outputs)
    )
    head = (
        f"code: {code}\nthreshold: 1.0\nconcept: The output is fine.\n"
        "inclusion_criteria: Apply always. Flag if it is not.\n"
    )
    (pytester.path / "benchmarks").mkdir(exist_ok=True)
    (pytester.path / "benchmarks" / f"{code}.yaml").write_text(f"{head}cases:\n{cases}\n")


def calls(pytester: pytest.Pytester) -> list[str]:
    log = pytester.path / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:syrupy", "-p", "no:cacheprovider", "--llmjudge-cache=off", *args)


def test_a_run_keeps_at_most_concurrency_calls_in_flight(pytester: pytest.Pytester) -> None:
    sleepy_project(pytester, ["SLEEP 0.02"] * 12)
    result = run(pytester, "--llmjudge-concurrency=3")
    result.assert_outcomes(passed=13)
    assert (pytester.path / "peak.txt").read_text() == "3"


def test_all_calls_start_at_once_and_results_are_reported_in_collection_order(
    pytester: pytest.Pytester,
) -> None:
    # Earlier cases take longer, so verdicts arrive in reverse; pytest still reports in order.
    outputs = [f"SLEEP {0.02 * (8 - i):.2f}" for i in range(8)]
    sleepy_project(pytester, outputs)
    result = run(pytester, "-v", "--llmjudge-concurrency=16")
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines([f"*::B-SLEEP::c{i:02d} PASSED*" for i in range(8)], consecutive=True)
    assert (pytester.path / "peak.txt").read_text() == "8"  # all in flight together


@pytest.mark.parametrize(
    ("options", "most_calls"), [(["-x"], 5), (["--maxfail=2"], 5), (["-x", "-n", "2"], 12)]
)
def test_exitfirst_and_maxfail_cancel_pending_calls(
    pytester: pytest.Pytester, options: list[str], most_calls: int
) -> None:
    sleepy_project(pytester, ["FAIL", "FAIL"] + ["SLEEP 0.5"] * 38)
    result = run(pytester, *options, "--llmjudge-concurrency=3")
    assert result.ret in {pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED}  # xdist: 2
    result.stdout.fnmatch_lines(["*stopping after * failure*"])
    # serially the 35 calls that had not started never do; under xdist each worker's 3 in flight
    # and the ones it was sent ahead finish at most
    assert len(calls(pytester)) <= most_calls  # (speed is bench/'s to measure, not a test's)


def test_ctrl_c_cancels_pending_calls_and_exits_cleanly(pytester: pytest.Pytester) -> None:
    sleepy_project(pytester, ["SLEEP 0.05"] + ["SLEEP 30"] * 9)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:syrupy",
        "-p",
        "no:cacheprovider",
        "--llmjudge-concurrency=4",
    ]
    process = subprocess.Popen(
        command,
        cwd=pytester.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=ctrl_c_restored,
    )
    deadline = time.monotonic() + 20
    while len(calls(pytester)) < 5 and time.monotonic() < deadline:
        time.sleep(0.02)  # the first case's verdict is in, four calls are in flight, five queued
    began = time.monotonic()
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=15)
    text = output.decode()
    assert time.monotonic() - began < 6, text
    assert process.returncode == pytest.ExitCode.INTERRUPTED, text
    assert "KeyboardInterrupt" in text
    assert "Exception in thread" not in text and "Task was destroyed" not in text, text
    assert len(calls(pytester)) == 5  # nothing new started after Ctrl-C


# Noted by the judge when the first call starts; written once the last item has run.
LATE_IMPORTS_CONFTEST = """

import sys

import pytest

FIRST_CALL = {}
_judge = judge


async def judge(messages, info):
    FIRST_CALL.setdefault("modules", set(sys.modules))
    return await _judge(messages, info)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    yield
    late = set(sys.modules) - FIRST_CALL["modules"]
    (HERE / "late.txt").write_text(" ".join(sorted(m for m in late if m.startswith("pytest_llmjudge"))))
"""


def test_the_plugin_imports_nothing_while_judge_calls_are_in_flight(pytester: pytest.Pytester) -> None:
    # An import while verdicts arrive is where a Ctrl-C lands; one inside the source an import
    # exec()s (a dataclass's methods) makes ``python -m pytest`` exit by SIGINT, not with 2.
    sleepy_project(pytester, ["SLEEP 0.01"] * 3)
    pytester.makeconftest(SLEEPY_CONFTEST + LATE_IMPORTS_CONFTEST)
    result = pytester.runpytest_subprocess(
        "-p", "no:syrupy", "-p", "no:cacheprovider", "--llmjudge-cache=off"
    )
    result.assert_outcomes(passed=4)
    assert (pytester.path / "late.txt").read_text() == ""


def test_a_session_without_benchmarks_imports_no_judge_or_gates(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(
        """
        import atexit
        import sys
        from pathlib import Path

        HEAVY = ("pydantic_ai", "pydantic_evals", "pytest_llmjudge.reporting", "pytest_llmjudge.gating")

        def pytest_configure(config):
            # at exit: after every plugin's unconfigure hook, which may import too
            heavy = Path("heavy.txt").resolve()
            found = lambda: ",".join(m for m in HEAVY if m in sys.modules) or "none"
            atexit.register(lambda: heavy.write_text(found()))
        """
    )
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    (pytester.path / "benchmarks").mkdir()
    (pytester.path / "benchmarks" / "notes.md").write_text("not a benchmark\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "llmjudge")
    result.assert_outcomes(passed=1)
    assert (pytester.path / "heavy.txt").read_text() == "none"


def test_plugin_import_stays_light() -> None:
    """The plugin module loads in every pytest run: no pydantic, YAML or Jinja at import time."""
    code = textwrap.dedent(
        """
        import sys
        import pytest_llmjudge.plugin
        heavy = (
            "pydantic", "pydantic_ai", "pydantic_evals", "yaml", "jinja2", "sqlite3", "scipy", "statsmodels",
            "numpy",
        )
        print(",".join(m for m in heavy if m in sys.modules) or "none")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    assert done.stdout.strip() == "none"


# -- judge calls start while collection goes on, when nothing can deselect -----------------------

# Collecting B-SLEEP2 waits (up to WAIT seconds) for a judge call, then notes what it saw.
WATCH_COLLECTION = """

import os
import time


def pytest_collectstart(collector):
    if collector.name == "B-SLEEP2.yaml":
        deadline = time.monotonic() + float(os.environ.get("WAIT", "5"))
        while not (HERE / "calls.log").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        (HERE / "seen.txt").write_text("judging" if (HERE / "calls.log").exists() else "idle")
"""


def judged(pytester: pytest.Pytester) -> list[str]:
    """The candidate outputs the judge was sent, sorted."""
    return sorted(json.loads(line)["CANDIDATE_OUTPUT"] for line in calls(pytester))


def two_files(pytester: pytest.Pytester, extra_conftest: str = "") -> None:
    sleepy_project(pytester, ["one", "two"], code="B-SLEEP1")
    sleepy_project(pytester, ["three", "four"], code="B-SLEEP2")
    pytester.makeconftest(SLEEPY_CONFTEST + WATCH_COLLECTION + extra_conftest)


def test_calls_start_while_later_benchmark_files_are_collected(pytester: pytest.Pytester) -> None:
    two_files(pytester)
    run(pytester).assert_outcomes(passed=6)
    assert (pytester.path / "seen.txt").read_text() == "judging"
    assert judged(pytester) == ["four", "one", "three", "two"]  # each case once


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (["-k", "c00"], ["one", "three"]),
        (["-m", "not slow"], ["four", "one", "three", "two"]),
        (["--deselect", "benchmarks/B-SLEEP1.yaml::B-SLEEP1::c01"], ["four", "one", "three"]),
        (["--collect-only"], []),
        (["benchmarks/B-SLEEP1.yaml::B-SLEEP1::c00", "benchmarks/B-SLEEP2.yaml"], ["four", "one", "three"]),
    ],
)
def test_no_call_starts_before_the_selection_is_known(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, selection: list[str], expected: list[str]
) -> None:
    monkeypatch.setenv("WAIT", "0.3")
    two_files(pytester)
    run(pytester, *selection)
    assert (pytester.path / "seen.txt").read_text() == "idle"
    assert judged(pytester) == expected  # a deselected case is never judged


def test_a_conftest_that_deselects_keeps_early_calls_off(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAIT", "0.3")
    deselect = """

def pytest_collection_modifyitems(config, items):
    kept = [item for item in items if not item.nodeid.endswith("::c01")]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
"""
    two_files(pytester, deselect)
    run(pytester).assert_outcomes(passed=4, deselected=2)
    assert (pytester.path / "seen.txt").read_text() == "idle"
    assert judged(pytester) == ["one", "three"]


# -- the switch interval while judging ----------------------------------------------------------


def test_the_switch_interval_is_lowered_while_a_scheduler_runs_and_put_back_after() -> None:
    from pytest_llmjudge.execution.scheduler import SWITCH_INTERVAL

    before = sys.getswitchinterval()
    assert before > SWITCH_INTERVAL  # the interpreter's default, 5 ms
    seen: list[float] = []

    async def job(slots: Slots) -> int:
        seen.append(sys.getswitchinterval())
        return 1

    first: Scheduler[int] = Scheduler(concurrency=1)
    second: Scheduler[int] = Scheduler(concurrency=1)
    idle: Scheduler[int] = Scheduler(concurrency=1)  # never started: changes nothing
    first.start([("a", job)])
    second.start([("b", job)])
    assert first.result("a") == second.result("b") == 1
    first.close()
    assert sys.getswitchinterval() == SWITCH_INTERVAL  # the second still runs
    second.close()
    idle.close()
    assert seen == [SWITCH_INTERVAL, SWITCH_INTERVAL]
    assert sys.getswitchinterval() == before
    try:  # a lower interval of the user's own is kept; a scheduler told None leaves it alone
        sys.setswitchinterval(0.0001)
        for setting in (SWITCH_INTERVAL, None):
            scheduler: Scheduler[int] = Scheduler(concurrency=1, switch_interval=setting)
            scheduler.start([(f"{setting}", job)])
            scheduler.result(f"{setting}")
            scheduler.close()
        assert seen[2:] == [pytest.approx(0.0001, abs=2e-6)] * 2  # kept in whole microseconds
    finally:
        sys.setswitchinterval(before)


def test_a_run_judges_with_a_short_switch_interval_and_ends_with_its_own(pytester: pytest.Pytester) -> None:
    sleepy_project(pytester, ["SLEEP 0.01"] * 4)
    conftest = SLEEPY_CONFTEST.replace(
        "async def judge(messages, info):\n",
        "async def judge(messages, info):\n"
        "    (HERE / 'during.txt').write_text(repr(sys.getswitchinterval()))\n",
    )
    conftest += (
        "\nimport sys\n\n\ndef pytest_unconfigure(config):\n"
        "    (HERE / 'after.txt').write_text(repr(sys.getswitchinterval()))\n"
    )
    pytester.makeconftest(conftest)
    result = pytester.runpytest_subprocess(
        "-p", "no:syrupy", "-p", "no:cacheprovider", "--llmjudge-cache=off"
    )
    result.assert_outcomes(passed=5)
    assert float((pytester.path / "during.txt").read_text()) == 0.0005
    assert float((pytester.path / "after.txt").read_text()) == 0.005
