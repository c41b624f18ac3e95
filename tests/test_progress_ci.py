"""Progress lines in CI logs: a run whose output is not a terminal says every tenth of its cases,
and every 30 seconds, how many cases are judged, how many model calls were made and their cost."""

from __future__ import annotations

import re

import pytest

from pytest_llmjudge.gating.records import CaseRecord
from pytest_llmjudge.reporting import progress_log
from pytest_llmjudge.reporting.progress_log import ProgressLog, wanted
from tests.conftest import Suite

# A judge that takes 0.7 s over outputs that say SLOW, so the run waits for its verdict.
SLOW_JUDGE = """
import asyncio

from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel


async def judge(messages, info):
    texts = [getattr(p, "content", None) for m in messages for p in m.parts]
    if "SLOW" in "".join(t for t in texts if isinstance(t, str)):
        await asyncio.sleep(0.7)
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"pass": True, "reason": "fine"})])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="slow")
"""

LINE = re.compile(
    r"^llmjudge: (\d+)/(\d+) cases judged \((\d+)%\) · (\d+) model calls? · (\S+) · \d+s$", re.M
)


def _cases(n: int, prefix: str = "c", output: str = "fine") -> str:
    return "".join(f"  - {{id: {prefix}{i}, candidate_output: {output}}}\n" for i in range(n))


def test_a_line_every_tenth_of_the_cases_with_calls_and_cost(suite: Suite) -> None:
    suite.benchmark("PROG1", "code: PROG1\nconcept: Fine.\ncases:\n" + _cases(40))
    result = suite.run("--llmjudge-price", "fake-judge=1000/2000")
    result.assert_outcomes(passed=41)
    lines = LINE.findall(result.stdout.str())
    assert [(done, total, share) for done, total, share, _, _ in lines] == [
        (str(4 * k), "40", str(10 * k)) for k in range(1, 10)
    ]
    assert [int(calls) for _, _, _, calls, _ in lines] == [4 * k for k in range(1, 10)]
    costs = [float(cost.lstrip("$")) for *_, cost in lines]
    assert costs == sorted(costs) and costs[0] > 0


def test_a_short_run_prints_no_line_until_30_seconds_pass(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite.pytester.makeconftest(SLOW_JUDGE)
    suite.benchmark("PROG2", "code: PROG2\nconcept: Fine.\ncases:\n" + _cases(1, "s", "SLOW") + _cases(2))
    assert "cases judged" not in suite.run().stdout.str()
    suite.benchmark("PROG2", "code: PROG2\nconcept: Changed.\ncases:\n" + _cases(1, "s", "SLOW") + _cases(2))
    monkeypatch.setattr(progress_log, "EVERY_SECONDS", 0.3)  # what 30 s do, in a test's time
    out = suite.run().stdout.str()
    assert re.search(r"^llmjudge: 0/3 cases judged \(0%\) · 0 model calls · \$0\.00 · \d+s$", out, re.M), out


@pytest.mark.parametrize(
    ("is_tty", "environ", "verbosity", "worker", "shown"),
    [
        (False, {}, 0, False, True),
        (False, {"CI": "true"}, 1, False, True),
        (True, {"TERM": "dumb"}, 0, False, True),
        (True, {}, 0, False, False),  # a terminal has the live status line instead
        (False, {}, -2, False, False),
        (False, {}, 0, True, False),
    ],
)
def test_lines_where_no_status_line_is_drawn(
    is_tty: bool, environ: dict[str, str], verbosity: int, worker: bool, shown: bool
) -> None:
    assert wanted(is_tty, environ, verbosity, worker) is shown


def _record(case: str) -> CaseRecord:
    return CaseRecord("B", case, "pass", f"b.yaml::{case}", "", None, "threshold_gate", 1.0, None)


def test_timed_lines_come_between_the_tenths() -> None:
    now = [0.0]
    written: list[str] = []
    log = ProgressLog(100, written.append, clock=lambda: now[0])
    for i in range(5):
        now[0] += 7.0
        log.add([_record(f"c{i}")])
    log.tick()
    assert written == ["llmjudge: 5/100 cases judged (5%) · 0 model calls · $0.00 · 35s"]
    log.add([_record(f"c{i}") for i in range(5, 10)])
    assert written[-1].startswith("llmjudge: 10/100 cases judged (10%)")
    log.tick()
    assert len(written) == 2  # the clock has not moved since


def test_an_xdist_controller_prints_the_timed_lines_of_its_workers_cases(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite.pytester.makeconftest(SLOW_JUDGE)
    slow = "".join(f"  - {{id: s{i}, candidate_output: SLOW {i}}}\n" for i in range(4))
    suite.benchmark("PROG3", "code: PROG3\nconcept: Fine.\ncases:\n" + slow + _cases(4))
    monkeypatch.setattr(progress_log, "EVERY_SECONDS", 0.3)  # what 30 s do, in a test's time
    result = suite.run("-n", "2")
    result.assert_outcomes(passed=9)
    out = result.stdout.str()
    lines = re.findall(r"^llmjudge: (\d+) cases judged · (\d+) model calls? · .+ · \d+s$", out, re.M)
    assert lines, out
    assert all(0 < int(cases) <= 8 and int(calls) == int(cases) for cases, calls in lines), lines
