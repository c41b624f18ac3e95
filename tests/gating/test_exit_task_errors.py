"""The exit reason tells a task's errors (no output to judge) from the judge's, counting only the
items that errored."""

from __future__ import annotations

from pytest_llmjudge.gating.records import CaseRecord
from tests.gating.test_decide_exit import gate
from tests.gating.test_decide_exit_reasons import decide, ran


def erroring(case_id: str, reason: str) -> CaseRecord:
    return CaseRecord("B1", case_id, "error", nodeid=f"B1::{case_id}", reason=reason)


def test_task_and_judge_errors_are_counted_apart() -> None:
    errors = [
        erroring("t0", "task-error: boom"),
        erroring("t1", "task-timeout: slow"),
        erroring("j0", "http-500: down"),
    ]
    status, reasons = decide(1, [gate(passed=9, failed=1, errors=3)], ran("B1", 9, 1) + errors)
    assert status == 1
    assert reasons == (
        "3 failing or erroring item(s): 2 task errors, 1 judge error",
    )  # the failure is tolerated


def test_judge_errors_alone_are_not_broken_down() -> None:
    status, reasons = decide(
        1, [gate(passed=10, failed=0, errors=1)], [*ran("B1", 10, 0), erroring("j0", "http-500")]
    )
    assert (status, reasons) == (1, ("1 failing or erroring item(s)",))


def test_one_task_error_is_said_in_the_singular() -> None:
    errors = [erroring("t0", "task-error: boom")]
    _, reasons = decide(1, [gate(passed=10, failed=0, errors=1)], ran("B1", 10, 0) + errors)
    assert reasons == ("1 failing or erroring item(s): 1 task error",)
