"""The live status line: its text, when it shows, how it draws and erases itself."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import Suite

from pytest_llmjudge.execution.scheduler import Progress, Scheduler, Slots
from pytest_llmjudge.reporting import status_line
from pytest_llmjudge.reporting.status_line import ERASE_TO_END, RESTORE, SAVE, StatusLine, status_text, wanted


def test_status_text_counts_done_in_flight_queued_cached_and_errors() -> None:
    progress = Progress(total=1000, done=120, in_flight=32, cache_hits=40, errors=1)
    assert status_text(progress) == "judging 120/1000 · 32 in flight · 848 queued · 40 cached · 1 error"


def test_status_text_is_cut_to_the_room_left() -> None:
    text = status_text(Progress(total=1000, done=5, in_flight=3), room=20)
    assert len(text) == 20 and text.endswith("…")


@pytest.mark.parametrize(
    ("is_tty", "environ", "verbosity", "worker", "shown"),
    [
        (True, {}, 0, False, True),
        (True, {}, -1, False, True),
        (False, {}, 0, False, False),
        (True, {"CI": "true"}, 0, False, False),
        (True, {"TERM": "dumb"}, 0, False, False),
        (True, {}, -2, False, False),
        (True, {}, 0, True, False),
        (True, {"PYTEST_XDIST_WORKER": "gw0"}, 0, False, False),
    ],
)
def test_shown_on_interactive_terminals_only(
    is_tty: bool, environ: dict[str, str], verbosity: int, worker: bool, shown: bool
) -> None:
    assert wanted(is_tty, environ, verbosity, worker) is shown


def test_drawn_after_the_cursor_and_erased_before_pytest_writes_again() -> None:
    stream = io.StringIO()
    guarded: list[str] = []

    @contextmanager
    def guard() -> Iterator[None]:
        guarded.append("suspended")
        yield

    line = StatusLine(stream, column=lambda: 40, width=lambda: 120, guard=guard)
    line.waiting(Progress(total=10, done=2, in_flight=4))
    line.resumed()
    line.resumed()  # nothing left to erase
    drawn = f"{SAVE}  judging 2/10 · 4 in flight · 4 queued · 0 cached · 0 errors{ERASE_TO_END}{RESTORE}"
    assert stream.getvalue() == drawn + ERASE_TO_END
    assert guarded == ["suspended", "suspended"]


def test_not_drawn_when_the_line_is_nearly_full() -> None:
    stream = io.StringIO()
    line = StatusLine(stream, column=lambda: 70, width=lambda: 80)
    line.waiting(Progress(total=10))
    line.resumed()
    assert stream.getvalue() == ""


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    def waiting(self, progress: Progress) -> None:
        self.events.append(f"waiting {progress.done}/{progress.total}")

    def resumed(self) -> None:
        self.events.append("resumed")


def test_the_scheduler_shows_progress_while_an_item_waits() -> None:
    recorder = Recorder()
    scheduler: Scheduler[str] = Scheduler(concurrency=2, waiting=recorder, poll=0.01)

    async def slow(slots: Slots) -> str:
        async with slots.hold():
            await asyncio.sleep(0.1)
        return "verdict"

    scheduler.start([("k", slow)])
    try:
        assert scheduler.result("k") == "verdict"
        assert scheduler.result("k") == "verdict"  # already done: nothing shown
    finally:
        scheduler.close()
    assert recorder.events[0] == "waiting 0/1" and recorder.events[-1] == "resumed"
    assert recorder.events.count("resumed") == 1


def test_no_status_line_when_output_is_not_a_terminal(suite: Suite) -> None:
    suite.benchmark("B-P", "code: B-P\nconcept: Fine.\ncases:\n  - id: a\n    candidate_output: x\n")
    result = suite.run()
    result.assert_outcomes(passed=2)
    assert SAVE not in result.stdout.str() and ERASE_TO_END not in result.stdout.str()


# A judge that takes 0.7 s over cases whose output says SLOW, so their items wait and the status
# line is drawn; instant otherwise.
SLOW_JUDGE = """
import asyncio

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


async def judge(messages, info):
    texts = [getattr(p, "content", None) for m in messages for p in m.parts]
    if "SLOW" in "".join(t for t in texts if isinstance(t, str)):
        await asyncio.sleep(0.7)
    args = {"pass": True, "reason": "fine"}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="slow")
"""

CACHED_CASES = (
    "code: B-P\nconcept: Fine.\ncases:\n  - {id: a, candidate_output: x}\n  - {id: b, candidate_output: y}\n"
)


def test_the_status_line_counts_the_cases_the_cache_answered(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite.pytester.makeconftest(SLOW_JUDGE)
    suite.benchmark("B-P", CACHED_CASES)
    suite.run().assert_outcomes(passed=3)  # a and b are judged and cached
    suite.benchmark("B-P", CACHED_CASES + "  - {id: c, candidate_output: SLOW}\n")
    monkeypatch.setattr(status_line, "wanted", lambda *args: True)  # as on an interactive terminal
    monkeypatch.setenv("COLUMNS", "200")
    result = suite.run("-q")
    result.assert_outcomes(passed=4)
    assert "judging 0/1 · 1 in flight · 0 queued · 2 cached · 0 errors" in result.stdout.str()
