"""The estimate in-process: which judge and task calls a run would make, found without making
any (the caches answer the rest), per benchmark, and the problems that keep cases uncounted."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.pipeline.estimating import PlannedCalls, plan_calls

from .fakes import (
    Item,
    Judge,
    Project,
    TaskLog,
    TaskModel,
    fake_models,
    model_task_cases,
    outcomes,
    service,
)

TWO = """\
cases:
  - {id: good, candidate_output: hello}
  - {id: bad, candidate_output: FAIL here}
"""


def _plan(
    tmp_path: Path, cases: Sequence[Item], judge: Judge | None = None, **settings: Any
) -> tuple[list[PlannedCalls], list[str]]:
    host = service(tmp_path, judge, **settings)
    host.estimating = True
    try:
        return plan_calls(host, cases)
    finally:
        host.close()


def _run(tmp_path: Path, cases: Sequence[Item], judge: Judge, **settings: Any) -> None:
    host = service(tmp_path, judge, **settings)
    outcomes(host, cases)
    host.close()


def test_each_uncached_case_is_one_judge_call_and_no_model_is_called(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    (plan,), problems = _plan(tmp_path, cases, judge)
    assert problems == [] and judge.calls == []
    assert plan.benchmark == "A" and plan.judge == "function:fake-judge"
    assert [samples for _, samples in plan.misses] == [1, 1] and plan.cached == 0
    assert "hello" in plan.misses[0][0] and "FAIL here" in plan.misses[1][0]
    assert plan.judge_tokens is not None
    assert plan.task == "" and plan.task_tokens is None and plan.task_requests == []


def test_cached_verdicts_are_no_calls(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    _run(tmp_path, cases[:1], judge)
    (plan,), _ = _plan(tmp_path, cases, judge)
    assert plan.cached == 1 and len(plan.misses) == 1 and "FAIL here" in plan.misses[0][0]
    _run(tmp_path, cases, judge)
    (plan,), _ = _plan(tmp_path, cases, judge)
    assert plan.cached == 2 and plan.misses == [] and plan.judge == "" and plan.judge_tokens is None


def test_with_the_cache_off_every_case_is_a_call(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    _run(tmp_path, cases, judge)
    (plan,), _ = _plan(tmp_path, cases, judge, cache="off")
    assert plan.cached == 0 and len(plan.misses) == 2


def test_a_replay_makes_no_calls(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    _run(tmp_path, cases[:1], judge)
    (plan,), _ = _plan(tmp_path, cases, judge, cache="replay")
    assert plan.cached == 1 and plan.misses == []


def test_repeats_are_counted_per_sample(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", "judge: {repeats: 3}\n" + TWO)
    judge = Judge()
    (plan,), _ = _plan(tmp_path, cases, judge)
    assert [samples for _, samples in plan.misses] == [3, 3]
    _run(tmp_path, cases[:1], judge)
    (plan,), _ = _plan(tmp_path, cases, judge)
    assert [samples for _, samples in plan.misses] == [3] and plan.cached == 3
    assert "FAIL here" in plan.misses[0][0]


def test_checks_and_manual_cases_make_no_calls(tmp_path: Path) -> None:
    project = Project(tmp_path)
    code = project.cases("C", "evaluator_type: code\nchecks:\n  - {type: contains, value: hello}\n" + TWO)
    hybrid = project.cases("H", "evaluator_type: hybrid\nchecks:\n  - {type: contains, value: hello}\n" + TWO)
    manual = project.cases("M", "evaluator_type: manual_sme\n" + TWO)
    plans, problems = _plan(tmp_path, [*code, *hybrid, *manual], Judge())
    assert problems == []
    found = {p.benchmark: p for p in plans}
    assert found["C"].misses == [] and found["M"].misses == []
    assert len(found["H"].misses) == 1 and "hello" in found["H"].misses[0][0]  # the other fails its checks


def test_without_a_judge_the_problem_is_named_once(tmp_path: Path) -> None:
    project = Project(tmp_path)
    cases = project.cases("A", TWO) + project.cases("B", TWO)
    plans, problems = _plan(tmp_path, cases)
    assert len(problems) == 1 and problems[0].startswith("no judge model is configured")
    assert [p.misses for p in plans] == [[], []]


def test_an_unusable_judge_model_is_a_problem_of_its_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = Project(tmp_path)
    cases = project.cases("B", "judge: {model: 'nosuch:x', base_url: 'not a url'}\n" + TWO)
    _, problems = _plan(tmp_path, cases, Judge())
    assert len(problems) == 1 and problems[0].startswith("B: judge model: ")


def test_a_damaged_cache_is_the_one_problem(tmp_path: Path) -> None:
    cache = tmp_path / ".llmjudge/cache.sqlite"
    cache.parent.mkdir()
    cache.write_bytes(b"not a database" * 100)
    plans, problems = _plan(tmp_path, Project(tmp_path).cases("A", TWO), Judge())
    assert plans == [] and len(problems) == 1 and problems[0].startswith("--llmjudge-cache-path: ")


MIXED = """\
cases:
  - {id: win, candidate_output: BETTER one, baseline_output: plain one}
  - {id: same, candidate_output: same words, baseline_output: same words}
  - {id: alone, candidate_output: no baseline}
"""


def test_a_pairwise_case_is_two_calls_and_identical_or_unpaired_ones_none(tmp_path: Path) -> None:
    cases = Project(tmp_path).pairs("P", MIXED)
    (plan,), _ = _plan(tmp_path, cases, Judge())
    assert len(plan.misses) == 2
    assert all("BETTER one" in text and "plain one" in text for text, _ in plan.misses)


def test_a_panel_case_is_counted_per_member(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    members = {n: Judge(n) for n in "ab"}
    fake_models(monkeypatch, members)
    cases = Project(tmp_path).cases("P", "judge:\n  panel: [fake:a, fake:b]\n" + TWO)
    plans, problems = _plan(tmp_path, cases)
    assert problems == [] and [p.benchmark for p in plans] == ["P (fake:a)", "P (fake:b)"]
    assert [p.judge for p in plans] == ["fake:a", "fake:b"] and all(len(p.misses) == 2 for p in plans)
    assert members["a"].calls == []


def test_a_model_tasks_calls_are_counted_once_with_the_judge_calls_on_their_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = TaskModel()
    fake_models(monkeypatch, {"task": model})
    cases = model_task_cases(Project(tmp_path), "M", "  - {id: c0, source_narrative: alpha}\n")
    judge = Judge()
    (plan,), problems = _plan(tmp_path, cases, judge)
    assert problems == [] and model.calls == [] and judge.calls == []
    assert plan.task == "fake:task" and plan.task_tokens is not None
    assert plan.task_requests == ["[user]\nNarrative: alpha"] and len(plan.misses) == 1
    _run(tmp_path, cases, judge)
    (plan,), _ = _plan(tmp_path, cases, judge)
    assert plan.task_requests == [] and plan.misses == [] and plan.cached == 1


def test_a_produced_output_in_the_cache_is_judged_as_produced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = TaskModel()
    fake_models(monkeypatch, {"task": model})
    cases = model_task_cases(Project(tmp_path), "M", "  - {id: c0, source_narrative: alpha}\n")
    _run(tmp_path, cases, Judge())
    (plan,), _ = _plan(tmp_path, cases, Judge(), repeats=2)  # sample 1 is still to judge
    assert plan.task_requests == [] and plan.cached == 1
    assert plan.misses[0][1] == 1 and "said alpha" in plan.misses[0][0]


def test_a_task_that_cannot_run_makes_no_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_models(monkeypatch, {"task": TaskModel()})
    cases = model_task_cases(Project(tmp_path), "M", "  - {id: c0, source_narrative: alpha}\n")
    (plan,), _ = _plan(tmp_path, cases, Judge(), task_cache="replay")
    assert plan.task_requests == [] and plan.misses == []


def test_a_python_tasks_call_is_not_seen_but_its_judge_call_is(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", "cases:\n  - {id: c0, source_narrative: alpha}\n", task.built())
    (plan,), _ = _plan(tmp_path, cases, Judge())
    assert task.calls == [] and plan.task == "" and plan.task_requests == [] and len(plan.misses) == 1


def test_a_pairwise_task_case_is_estimated_on_the_baseline_output(tmp_path: Path) -> None:
    task = TaskLog()
    body = "cases:\n  - {id: c0, source_narrative: alpha, baseline_output: base}\n"
    cases = Project(tmp_path).pairs("P", body, task.built())
    (plan,), _ = _plan(tmp_path, cases, Judge())
    assert task.calls == [] and plan.misses == []  # the output to come counts as the baseline's: a tie


def test_a_model_tasks_tokens_are_projected_from_its_price_settings_and_stored_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_models(monkeypatch, {"task": TaskModel(tokens=(7, 3))})
    project = Project(tmp_path)
    two = "  - {id: c0, source_narrative: alpha}\n  - {id: c1, source_narrative: beta}\n"
    cases = model_task_cases(project, "M", two, task_extra="  settings: {max_tokens: 50}\n")
    _run(tmp_path, cases[:1], Judge())
    (plan,), _ = _plan(tmp_path, cases, Judge(), price=("fake:task=1/2",))
    tokens = plan.task_tokens
    assert tokens is not None and plan.task_requests == ["[user]\nNarrative: beta"]
    assert tokens.output_history == (3,) and tokens.max_output_tokens == 50
    assert tokens.price is not None and (tokens.price.input_mtok, tokens.price.output_mtok) == (
        Decimal(1),
        Decimal(2),
    )
    other = model_task_cases(project, "N", two)  # another benchmark: no answers stored yet
    (_, plan), _ = _plan(tmp_path, [*cases, *other], Judge())
    assert plan.task_tokens is not None and plan.task_tokens.output_history == ()
    assert plan.task_tokens.max_output_tokens is None
    (plan,), _ = _plan(tmp_path, other, Judge(), task_cache="off")  # no output cache to read
    assert plan.task_tokens is not None and plan.task_tokens.output_history == ()
    assert plan.task_requests == ["[user]\nNarrative: alpha", "[user]\nNarrative: beta"]


def test_a_code_cases_model_task_is_a_call_and_its_checks_ask_no_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_models(monkeypatch, {"task": TaskModel()})
    checks = "evaluator_type: code\nchecks:\n  - {type: contains, value: said}\n"
    cases = model_task_cases(
        Project(tmp_path), "M", "  - {id: c0, source_narrative: alpha}\n", task_extra=checks
    )
    (plan,), problems = _plan(tmp_path, cases)  # no judge model: none is needed
    assert problems == [] and plan.task_requests == ["[user]\nNarrative: alpha"] and plan.misses == []
    judged = Project(tmp_path).cases("A", TWO)  # a judged benchmark too: the run opens its verdict cache
    _run(tmp_path, [*cases, *judged], Judge())
    (plan,), _ = _plan(tmp_path, cases)
    assert plan.task_requests == [] and plan.misses == [] and plan.cached == 0


def test_a_manual_cases_task_is_no_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_models(monkeypatch, {"task": TaskModel()})
    manual = "evaluator_type: manual_sme\n"
    cases = model_task_cases(
        Project(tmp_path), "M", "  - {id: c0, source_narrative: alpha}\n", task_extra=manual
    )
    (plan,), _ = _plan(tmp_path, cases, Judge())
    assert plan.task_requests == [] and plan.misses == []
