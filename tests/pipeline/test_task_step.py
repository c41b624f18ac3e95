"""The task step in-process: a model task's usage is priced and budgeted, a cached output costs
nothing, whatever a task does wrong is its case's ERROR (phase ``task``), and a task never
changes what the judge is told."""

from __future__ import annotations

import asyncio
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.models.answered import Answered
from pytest_llmjudge.models.judges import JudgeSetupError
from pytest_llmjudge.pipeline.task_step import TASK, TASK_CACHE, Produced
from pytest_llmjudge.tasks.task_input import TaskInput

from .fakes import (
    Judge,
    Project,
    TaskModel,
    fake_models,
    model_task_cases,
    outcomes,
    passed,
    python_task,
    service,
)

ONE = "cases:\n  - {id: c0, source_narrative: alpha}\n"
MODEL_CASES = "  - {id: c0, source_narrative: alpha}\n  - {id: c1, source_narrative: beta}\n"


@pytest.fixture
def task_model(monkeypatch: pytest.MonkeyPatch) -> TaskModel:
    model = TaskModel()
    fake_models(monkeypatch, {"task": model})
    return model


def test_a_model_tasks_output_carries_its_usage_price_and_who_answered(
    tmp_path: Path, task_model: TaskModel
) -> None:
    cases = model_task_cases(Project(tmp_path), "M", MODEL_CASES)
    judge = Judge()
    host = service(tmp_path, judge, price=("fake:task=1/2",))
    found = outcomes(host, cases)
    produced = host.tasks.produced[cases[0].nodeid]
    host.close()
    assert sorted(task_model.calls) == ["Narrative: alpha", "Narrative: beta"]
    assert produced.output == "said alpha" and produced.source == TASK and produced.task == "fake:task"
    assert (produced.input_tokens, produced.output_tokens) == (7, 3)
    assert produced.cost == Decimal(7 * 1 + 3 * 2) / 1_000_000
    assert produced.answered == Answered("task") and produced.saved is None
    task = cases[0].task
    assert task is not None and produced.fingerprint == task.task.fingerprint
    assert produced.cached_input_tokens == 0 and produced.latency is not None and produced.latency < 60
    assert '{"CANDIDATE_OUTPUT": "said alpha"}' in judge.calls
    assert all(passed(o) is True for o in found.values())
    again = service(tmp_path, judge, price=("fake:task=1/2",))
    outcomes(again, cases)
    cached = again.tasks.produced[cases[0].nodeid]
    again.close()
    assert len(task_model.calls) == 2 and len(judge.calls) == 2
    assert cached.source == TASK_CACHE and cached.output == "said alpha"
    assert (cached.input_tokens, cached.output_tokens) == (7, 3) and cached.cost == 0
    assert cached.saved == Decimal(13) / 1_000_000 and cached.answered == Answered("task")


def test_an_unpriced_model_tasks_cost_is_unknown(tmp_path: Path, task_model: TaskModel) -> None:
    cases = model_task_cases(Project(tmp_path), "M", MODEL_CASES)
    host = service(tmp_path, Judge())
    outcomes(host, cases)
    produced = host.tasks.produced[cases[0].nodeid]
    host.close()
    assert produced.cost is None and produced.input_tokens == 7


def test_an_unpriced_task_model_under_a_usd_budget_stops_before_the_task_runs(
    tmp_path: Path, task_model: TaskModel
) -> None:
    cases = model_task_cases(Project(tmp_path), "M", MODEL_CASES)
    host = service(tmp_path, Judge(), budget=1.0, price=("function:fake-judge=1/1",))
    with pytest.raises(JudgeSetupError, match="fake:task"):
        host.schedule(cases)
    host.close()
    assert task_model.calls == []


def test_an_unpriced_judge_of_a_task_case_stops_before_the_task_runs(
    tmp_path: Path, task_model: TaskModel
) -> None:
    cases = model_task_cases(Project(tmp_path), "M", MODEL_CASES)
    host = service(tmp_path, Judge(), budget=1.0, price=("fake:task=1/1",))
    with pytest.raises(JudgeSetupError, match="fake-judge"):
        host.schedule(cases)
    host.close()
    assert task_model.calls == []


def test_a_priced_task_and_judge_run_under_a_usd_budget(tmp_path: Path, task_model: TaskModel) -> None:
    cases = model_task_cases(Project(tmp_path), "M", MODEL_CASES)
    host = service(tmp_path, Judge(), budget=1.0, price=("fake:task=1/1", "function:fake-judge=1/1"))
    found = outcomes(host, cases)
    host.close()
    assert len(task_model.calls) == 2 and all(passed(o) is True for o in found.values())


def test_a_token_budget_refuses_task_calls_past_it(tmp_path: Path, task_model: TaskModel) -> None:
    cases = model_task_cases(Project(tmp_path), "M", MODEL_CASES)
    judge = Judge()
    host = service(tmp_path, judge, budget_tokens=1)
    found = outcomes(host, cases)
    host.close()
    assert task_model.calls == [] and judge.calls == []
    for outcome in found.values():
        assert outcome.failure is not None and outcome.failure.kind == "task-budget"
        assert outcome.failure.message.startswith("benchmarks/M.yaml:")
        assert outcome.failure.message.endswith("budget reached: spent 0 of 1 tokens")
    rerun = service(tmp_path, judge)  # a refused call is never cached: a rerun runs it
    outcomes(rerun, cases)
    rerun.close()
    assert len(task_model.calls) == 2


def test_a_model_task_that_raises_errors_its_case(tmp_path: Path, task_model: TaskModel) -> None:
    cases = model_task_cases(Project(tmp_path), "M", "  - {id: c0, source_narrative: boom}\n")
    host = service(tmp_path, Judge())
    found = outcomes(host, cases)
    host.close()
    failure = found["c0"].failure
    assert failure is not None and failure.kind == "task-error"
    assert (
        failure.message == "benchmarks/M.yaml:9:3: task fake:task raised RuntimeError: the task model broke"
    )


def test_a_model_task_request_that_cannot_render_errors_its_case(
    tmp_path: Path, task_model: TaskModel
) -> None:
    cases = model_task_cases(Project(tmp_path), "M", "  - {id: c0, inputs: {x: 1}}\n")
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    host.close()
    failure = found["c0"].failure
    assert failure is not None and failure.kind == "task-request" and "fake:task: " in failure.message
    assert task_model.calls == [] and judge.calls == []


def _run(tmp_path: Path, function: Any, body: str = ONE, **settings: Any) -> dict[str, Any]:
    cases = Project(tmp_path).cases("T", body, python_task(function))
    judge = Judge()
    host = service(tmp_path, judge, **settings)
    found = outcomes(host, cases)
    produced = {c.case.id: host.tasks.produced.get(c.nodeid) for c in cases}
    host.close()
    return {"outcomes": found, "produced": produced, "judge": judge}


def _failure(run: dict[str, Any], case: str = "c0") -> tuple[str, str]:
    failure = run["outcomes"][case].failure
    assert failure is not None
    return failure.kind, failure.message


def test_a_task_that_outlives_its_timeout_errors_its_case(tmp_path: Path) -> None:
    async def slow(case: TaskInput) -> str:
        await asyncio.sleep(5)
        return "late"

    run = _run(tmp_path, slow, task_timeout=0.2)
    assert _failure(run) == (
        "task-timeout",
        "benchmarks/T.yaml:6:5: task app:run@1 took longer than --llmjudge-task-timeout=0.2s",
    )
    assert run["judge"].calls == []


def test_a_task_that_returns_no_usable_output_errors_its_case(tmp_path: Path) -> None:
    run = _run(tmp_path, lambda case: 42)
    kind, message = _failure(run)
    assert kind == "task-output" and "task app:run@1 returned int" in message


def test_a_task_output_over_the_size_limit_errors_its_case(tmp_path: Path) -> None:
    run = _run(tmp_path, lambda case: "x" * 100, max_response_bytes=10)
    assert _failure(run)[0] == "task-output"


def test_a_task_that_exits_errors_its_case_naming_what_it_raised(tmp_path: Path) -> None:
    def leaves(case: TaskInput) -> str:
        raise SystemExit(3)

    kind, message = _failure(_run(tmp_path, leaves))
    assert kind == "task-error" and message.startswith(
        "benchmarks/T.yaml:6:5: task app:run@1 raised SystemExit: 3"
    )


def test_a_model_task_failing_as_a_judge_call_fails_errors_its_case(
    tmp_path: Path, task_model: TaskModel
) -> None:
    task_model.failure = "http-500"
    cases = model_task_cases(Project(tmp_path), "M", "  - {id: c0, source_narrative: alpha}\n")
    host = service(tmp_path, Judge())
    found = outcomes(host, cases)
    host.close()
    failure = found["c0"].failure
    assert failure is not None and failure.kind == "task-error"
    assert (
        failure.message
        == "benchmarks/M.yaml:9:3: task fake:task raised PendingFailure: http-500: the call failed"
    )


def test_a_model_task_call_left_in_its_batch_is_pending_not_an_error(
    tmp_path: Path, task_model: TaskModel
) -> None:
    task_model.failure = "batch-pending"
    cases = model_task_cases(Project(tmp_path), "M", "  - {id: c0, source_narrative: alpha}\n")
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    host.close()
    failure = found["c0"].failure
    assert failure is not None and failure.kind == "batch-pending"
    assert failure.message == "benchmarks/M.yaml:9:3: task fake:task: the call failed"
    assert judge.calls == []


def test_secrets_a_task_echoes_are_redacted_everywhere_in_its_output(tmp_path: Path) -> None:
    key = "sk-abcdefghijklmnop"
    run = _run(tmp_path, lambda case: {"said": key, "list": [key, 1], key: {"deep": key}})
    output = run["produced"]["c0"].output
    assert key not in str(output)
    assert output["list"][1] == 1 and len(output) == 3


def test_the_ground_truth_is_withheld_unless_the_task_sees_it(tmp_path: Path) -> None:
    seen: list[Any] = []

    def look(case: TaskInput) -> str:
        seen.append(case.ground_truth)
        return "ok"

    body = "cases:\n  - {id: c0, source_narrative: alpha, ground_truth: A}\n"
    project = Project(tmp_path)
    for sees in (False, True):
        host = service(tmp_path, Judge(), task_cache="off")
        outcomes(host, project.cases("T", body, python_task(look, sees_truth=sees)))
        host.close()
    assert seen == [None, "A"]


def test_a_task_changing_its_input_never_changes_what_the_judge_is_told(tmp_path: Path) -> None:
    def meddle(case: TaskInput) -> str:
        assert isinstance(case.inputs, dict) and isinstance(case.metadata, dict)
        case.inputs["scenario"] = "changed"
        case.metadata["tag"] = "changed"
        assert isinstance(case.ground_truth, dict)
        case.ground_truth.clear()
        return "ok"

    body = """\
    cases:
      - id: c0
        source_narrative: alpha
        inputs: {scenario: ward}
        metadata: {tag: one}
        ground_truth: {answer: A}
    """
    cases = Project(tmp_path).cases("T", body, python_task(meddle, sees_truth=True))
    host = service(tmp_path, Judge())
    outcomes(host, cases)
    request = host.tasks.requests[cases[0].nodeid]
    host.close()
    assert "ward" in request.inputs and "changed" not in request.inputs
    assert request.expected_output is not None and '"answer": "A"' in request.expected_output
    assert cases[0].case.spec.inputs == {"scenario": "ward"}


def test_the_task_sees_the_cases_fields(tmp_path: Path) -> None:
    seen: list[TaskInput] = []

    def look(case: TaskInput) -> str:
        seen.append(case)
        return "ok"

    body = "cases:\n  - {id: c0, source_narrative: alpha, inputs: {k: v}, metadata: {m: 1}}\n"
    _run(tmp_path, look, body)
    (given,) = seen
    assert (given.id, given.benchmark, given.source_narrative) == ("c0", "T", "alpha")
    assert (given.inputs, given.metadata, given.ground_truth) == ({"k": "v"}, {"m": 1}, None)


def test_tasks_run_within_the_task_concurrency(tmp_path: Path) -> None:
    lock = threading.Lock()
    running = [0, 0]  # now, most at once
    together = threading.Event()  # two tasks ran at once

    def count(case: TaskInput) -> str:
        with lock:
            running[0] += 1
            running[1] = max(running)
            if running[0] > 1:
                together.set()
        together.wait(0.5)  # long enough for another task to start, when it may
        with lock:
            running[0] -= 1
        return "ok"

    body = "cases:\n" + "".join(f"  - {{id: c{i}, source_narrative: n{i}}}\n" for i in range(3))
    _run(tmp_path, count, body, task_concurrency=1)
    assert running[1] == 1
    _run(tmp_path, count, body, task_concurrency=3, task_cache="off")
    assert running[1] > 1


def test_a_damaged_output_cache_is_a_setup_error(tmp_path: Path) -> None:
    cache = tmp_path / ".llmjudge/cache.sqlite"
    cache.parent.mkdir()
    cache.write_bytes(b"not a database" * 100)
    cases = Project(tmp_path).cases("T", ONE, python_task(lambda case: "ok"))
    host = service(tmp_path, Judge(), cache="off")
    with pytest.raises(JudgeSetupError, match=r"^--llmjudge-cache-path: "):
        host.schedule(cases)


def test_a_replay_miss_message_names_the_option_that_would_run_the_task(tmp_path: Path) -> None:
    both = _run(tmp_path, lambda case: "ok", cache="replay", task_cache="replay")
    kind, message = _failure(both)
    assert kind == "task-cache-miss"
    assert "--llmjudge-cache=replay never runs a task unless --llmjudge-task-cache=on is passed" in message
    assert f"in {tmp_path / '.llmjudge/cache.sqlite'}" in message and "from task app:run@1" in message


def test_a_produced_output_as_a_record() -> None:
    produced = Produced("o", TASK, "app:run@1", "fp", 0.5, 3, 2)
    assert produced.to_dict() == {
        "source": "task",
        "task": "app:run@1",
        "fingerprint": "fp",
        "latency": 0.5,
        "input_tokens": 3,
        "output_tokens": 2,
    }
    assert Produced("o", "case file").to_dict()["task"] is None
    assert Produced("o", "case file").to_dict()["fingerprint"] is None


def test_a_python_task_runs_under_a_token_budget_which_sees_no_call_of_it(tmp_path: Path) -> None:
    run = _run(tmp_path, lambda case: "ok", budget_tokens=1_000_000)
    assert passed(run["outcomes"]["c0"]) is True and run["produced"]["c0"].output == "ok"


def test_a_task_call_settles_what_it_used_so_the_next_one_fits_the_token_budget(
    tmp_path: Path, task_model: TaskModel
) -> None:
    code = "evaluator_type: code\nchecks:\n  - {type: contains, value: said}\n"  # no judge call
    two = "  - {id: c0, source_narrative: alpha}\n  - {id: c1, source_narrative: gamma}\n"
    cases = model_task_cases(Project(tmp_path), "M", two, task_extra=code)
    probe = service(tmp_path, budget_tokens=1_000_000)
    step = probe.tasks.step
    projected = []
    for case in cases:
        assert case.task is not None
        budget = step.budget(step.plan(case.task, "M", case.case))
        assert budget is not None
        projected.append(budget.tokens)
    probe.close()
    used = sum(task_model.tokens)  # 10 tokens a call
    limit = used + max(projected)  # room for one projection after one call's actual use
    assert sum(projected) > limit  # not for two projections
    host = service(tmp_path, budget_tokens=limit, task_concurrency=1)
    found = outcomes(host, cases)
    host.close()
    assert len(task_model.calls) == 2 and all(passed(o) is True for o in found.values())


def test_a_model_task_with_an_output_schema_produces_a_structured_output(
    tmp_path: Path, task_model: TaskModel
) -> None:
    project = Project(tmp_path)
    schema = '{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}'
    project.write("schemas/answer.json", schema)
    extra = "  output_schema: schemas/answer.json\n"
    cases = model_task_cases(project, "M", "  - {id: c0, source_narrative: alpha}\n", task_extra=extra)
    judge = Judge()
    host = service(tmp_path, judge)
    outcomes(host, cases)
    produced = host.tasks.produced[cases[0].nodeid]
    host.close()
    assert produced.output == {"answer": "said alpha"}
    assert judge.calls == ['{"CANDIDATE_OUTPUT": {"answer": "said alpha"}}']
