"""Behaviours of the judging pipeline found by mutation testing (mutmut on ``pipeline/``): each
test here tells a surviving mutant from the real code through something a user sees, an outcome,
a result, a message, a judge call made or not."""

from __future__ import annotations

import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.function import FunctionModel

from pytest_llmjudge.judging.verdict import JudgeFailure, Outcome
from pytest_llmjudge.models.judges import JudgeSetupError
from pytest_llmjudge.pipeline.host import Baseline
from pytest_llmjudge.pipeline.service import NO_MODEL_MESSAGE
from pytest_llmjudge.pipeline.task_step import TASK_CACHE
from pytest_llmjudge.suite.settings import RunSettings

from .fakes import (
    HEAD,
    PROMPT,
    Judge,
    PairItem,
    Project,
    TaskLog,
    TaskModel,
    fake_models,
    outcomes,
    passed,
    service,
)

TWO = """\
cases:
  - {id: good, candidate_output: hello}
  - {id: bad, candidate_output: FAIL here}
"""
PAIRS = """\
cases:
  - {id: win, candidate_output: BETTER one, baseline_output: plain one}
  - {id: loss, candidate_output: plain two, baseline_output: BETTER two}
  - {id: same, candidate_output: same words, baseline_output: same words}
  - {id: alone, candidate_output: no baseline}
"""
PAIRWISE = "judge:\n  mode: pairwise\n"


@pytest.fixture
def judges(monkeypatch: pytest.MonkeyPatch) -> dict[str, Judge]:
    """Judges reached by the model strings ``fake:a``, ``fake:b`` (any other cannot be used)."""
    found = {name: Judge(name) for name in "ab"}
    fake_models(monkeypatch, found)
    return found


# -- pairwise cases ---------------------------------------------------------------------------


def test_a_pair_never_scheduled_whose_outputs_are_identical_is_a_tie_when_its_result_is_asked(
    tmp_path: Path,
) -> None:
    pairs = {c.case.id: c for c in Project(tmp_path).pairs("P", PAIRS)}
    judge = Judge()
    host = service(tmp_path, judge)
    same = host.pairwise.result(pairs["same"])
    alone = host.pairwise.result(pairs["alone"])
    host.close()
    assert same.identical and same.outcome == "tie" and same.failure is None
    assert same.baseline == Baseline("same words", "case file")
    assert alone.unpaired and alone.outcome is None and alone.failure is None
    assert judge.calls == []


def test_an_xdist_worker_settles_each_pair_as_the_setup_error_with_its_own_baseline(tmp_path: Path) -> None:
    pairs = Project(tmp_path).pairs("P", PAIRS)
    host = service(tmp_path)
    host.setup_errors_per_case = True
    found = {c.case.id: host.pairwise.result(c) for c in pairs}
    host.close()
    assert found["win"].baseline == Baseline("plain one", "case file")
    assert found["loss"].baseline == Baseline("BETTER two", "case file")
    for case in ("win", "loss"):
        failure = found[case].failure
        assert failure is not None and failure.kind == "judge-setup"
        assert failure.message == NO_MODEL_MESSAGE.format(count=1)
    assert host.pairwise.results.keys() == {c.nodeid for c in pairs}


def test_an_xdist_worker_pair_stays_the_setup_error_of_its_batch_though_its_own_judge_could_answer(
    tmp_path: Path, judges: dict[str, Judge]
) -> None:
    project = Project(tmp_path)
    (pair, *_) = project.pairs("P", PAIRS, head=HEAD + PAIRWISE + "  model: fake:a\n", mode=False)
    plain = project.cases("A", TWO)
    host = service(tmp_path)
    host.setup_errors_per_case = True
    host.schedule([pair, *plain])  # the plain cases have no judge: the whole batch cannot judge
    result = host.pairwise.result(pair)
    host.close()
    failure = result.failure
    assert failure == JudgeFailure("judge-setup", NO_MODEL_MESSAGE.format(count=2))
    assert result.outcome is None and result.baseline == Baseline("plain one", "case file")
    assert judges["a"].calls == []


def test_a_two_judge_panel_pair_with_one_member_failing_errors_naming_that_member(
    tmp_path: Path, judges: dict[str, Judge]
) -> None:
    judges["b"].broken = ("one",)
    head = HEAD + PAIRWISE + "  panel: [fake:a, fake:b]\n"
    (win, *_) = Project(tmp_path).pairs("P", PAIRS, head=head, mode=False)
    host = service(tmp_path, attempts=1)
    host.schedule([win])
    result = host.pairwise.result(win)
    host.close()
    broken = result.members[1].failure
    assert broken is not None and result.members[0].failure is None
    assert result.failure == JudgeFailure(
        broken.kind, f"only 1 of 2 panel judges answered, 2 needed: fake:b: {broken}"
    )
    assert result.outcome is None and result.model == "panel(majority, 2 of 2): fake:a, fake:b"


def test_a_pair_whose_output_a_model_task_produces_is_judged_against_its_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_llmjudge.compile.sections import sections_for
    from pytest_llmjudge.models.models import judge_label
    from pytest_llmjudge.suite.files import load_benchmark
    from pytest_llmjudge.tasks.build import TaskOptions, build_task

    model = TaskModel()
    fake_models(monkeypatch, {"task": model})
    project = Project(tmp_path)
    project.write("prompts/task.yaml", PROMPT)
    body = """\
    task:
      model: fake:task
      prompt_file: prompts/task.yaml
    cases:
      - {id: better, source_narrative: BETTER one, baseline_output: plain one}
    """
    path = project.write("benchmarks/P.yaml", HEAD.format(code="P") + PAIRWISE + textwrap.dedent(body))
    benchmark = load_benchmark(path, "benchmarks/P.yaml", tmp_path)
    sections = sections_for(benchmark, tmp_path)
    built = build_task(benchmark, tmp_path, TaskOptions(), judge_label)
    from pytest_llmjudge.compile.request import compile_case

    (case,) = benchmark.cases
    pair = PairItem(
        "benchmarks/P.yaml::P::better",
        benchmark,
        case,
        compile_case(benchmark, sections, case),
        sections,
        built,
        Baseline("plain one", "case file"),
    )
    judge = Judge()
    host = service(tmp_path, judge)
    host.schedule([pair])
    result = host.pairwise.result(pair)
    host.close()
    assert result.failure is None and result.outcome == "win"
    assert result.candidate_output == "said BETTER one" and model.calls == ["Narrative: BETTER one"]
    assert len(judge.calls) == 2


def test_a_judged_pair_scheduled_again_is_neither_asked_again_nor_counted_as_a_cache_hit(
    tmp_path: Path,
) -> None:
    pairs = Project(tmp_path).pairs("P", PAIRS)
    judge = Judge()
    host = service(tmp_path, judge)
    host.schedule(pairs)
    first = {c.case.id: host.pairwise.result(c) for c in pairs}
    time.sleep(1.0)  # past the cache's batch time: the verdicts are written
    host.schedule(pairs)
    again = {c.case.id: host.pairwise.result(c) for c in pairs}
    hits = host.cache_hits
    host.close()
    assert len(judge.calls) == 4 and again == first and hits == 0


def test_a_judged_case_scheduled_again_keeps_its_outcome_and_counts_no_cache_hit(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    first = outcomes(host, cases)
    time.sleep(1.0)  # past the cache's batch time: the verdicts are written
    again = outcomes(host, cases)
    hits = host.cache_hits
    host.close()
    assert len(judge.calls) == 2 and again == first and hits == 0
    assert not any(o.cached for o in again.values())


# -- single cases -----------------------------------------------------------------------------


def test_an_xdist_worker_settles_a_case_as_the_setup_error_with_no_model_and_no_attempt(
    tmp_path: Path,
) -> None:
    good, _ = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path)
    host.setup_errors_per_case = True
    host.schedule([good])
    outcome = host.outcome(good)
    host.close()
    failure = JudgeFailure("judge-setup", NO_MODEL_MESSAGE.format(count=1))
    assert outcome == Outcome(None, failure, "", False, 0)


def test_an_xdist_worker_keeps_the_outcome_of_a_case_scheduled_before_a_batch_that_cannot_judge(
    tmp_path: Path, judges: dict[str, Judge]
) -> None:
    project = Project(tmp_path)
    (own,) = project.cases("O", "judge: {model: fake:a}\ncases:\n  - {id: o, candidate_output: hello}\n")
    plain = project.cases("A", TWO)
    host = service(tmp_path)
    host.setup_errors_per_case = True
    host.schedule([own])  # judged by its benchmark's own model
    host.schedule([own, *plain])  # the plain cases have no judge
    found = {c.case.id: host.outcome(c) for c in [own, *plain]}
    host.close()
    assert passed(found["o"]) is True and found["o"].model == "fake:a"
    assert passed(found["good"]) is None and judges["a"].calls == ['{"CANDIDATE_OUTPUT": "hello"}']


FIRST = {
    "code": "evaluator_type: code\nchecks:\n  - {type: contains, value: hello}\n",
    "panel": "judge: {panel: [fake:a, fake:b]}\n",
    "unusable own model": "judge: {model: 'nosuch:model'}\n",
}


@pytest.mark.parametrize("first", FIRST)
def test_every_case_without_a_judge_is_counted_whatever_case_comes_first(
    tmp_path: Path, judges: dict[str, Judge], first: str
) -> None:
    project = Project(tmp_path)
    leading = project.cases("F", FIRST[first] + "cases:\n  - {id: f, candidate_output: hello}\n")
    (pair, *_) = project.pairs("P", PAIRS)
    (plain, _) = project.cases("A", TWO)
    host = service(tmp_path)
    with pytest.raises(JudgeSetupError) as raised:
        host.schedule([*leading, pair, plain])
    host.close()
    assert str(raised.value) == NO_MODEL_MESSAGE.format(count=2)
    assert [j.calls for j in judges.values()] == [[], []]


def test_a_benchmarks_unusable_own_model_names_the_line_of_its_judge_model(
    tmp_path: Path, judges: dict[str, Judge]
) -> None:
    body = "judge:\n  model: 'nosuch:model'\ncases:\n  - {id: b, candidate_output: hello}\n"
    (case,) = Project(tmp_path).cases("B", body)
    host = service(tmp_path, Judge())
    outcome = host.outcome(case)
    host.close()
    where = case.benchmark.judge_model_location
    assert where is not None and str(where) != str(case.benchmark.location)
    message = f"{where}: judge.model: cannot use judge model 'nosuch:model'"
    assert outcome == Outcome(None, JudgeFailure("judge-setup", message), "nosuch:model", attempts=0)


@pytest.mark.parametrize(
    "first",
    [
        "evaluator_type: code\nchecks:\n  - {type: contains, value: hello}\n",
        "judge: {model: 'nosuch:model'}\n",
    ],
    ids=["settled by its checks", "unusable own model"],
)
def test_every_judge_call_starts_when_the_cases_are_scheduled(
    tmp_path: Path, judges: dict[str, Judge], first: str
) -> None:
    project = Project(tmp_path)
    leading = project.cases("F", first + "cases:\n  - {id: f, candidate_output: nope}\n")
    judged = project.cases("A", TWO)
    host = service(tmp_path, Judge())
    host.schedule([*leading, *judged])
    started = [host.has(c.nodeid) for c in judged]
    host.close()
    assert started == [True, True]


def test_checking_the_cache_with_the_cache_off_opens_nothing(tmp_path: Path) -> None:
    host = service(tmp_path, cache="off")
    host.check_cache()
    host.close()
    assert not (tmp_path / ".llmjudge").exists()


def test_a_run_judges_and_caches_after_its_cache_was_checked(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    host.check_cache()
    outcomes(host, cases)
    host.close()
    again = service(tmp_path, judge)
    again.check_cache()
    found = outcomes(again, cases)
    again.close()
    assert len(judge.calls) == 2 and again.cache_hits == 2
    assert {k: o.cached for k, o in found.items()} == {"good": True, "bad": True}


def test_closing_a_service_twice_is_harmless(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path, Judge())
    outcomes(host, cases)
    host.close()
    host.close()
    assert host.scheduler is None
    assert host.cache_write_errors == []


def test_without_combine_a_repeated_case_is_its_first_samples_verdict(tmp_path: Path) -> None:
    body = "judge: {repeats: 2}\ncases:\n  - {id: c, candidate_output: flip}\n"
    (case,) = Project(tmp_path).cases("R", body)
    judge = Judge()
    host = service(tmp_path, judge, concurrency=1)
    host.combine = None
    outcome = host.outcome(case)
    host.close()
    assert len(judge.calls) == 2 and passed(outcome) is True  # the second call fails it


def test_a_replay_settles_from_the_cache_without_writing_to_its_file(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    outcomes(host, cases)
    host.close()
    file = tmp_path / ".llmjudge/cache.sqlite"
    before = file.read_bytes()
    replay = service(tmp_path, judge, cache="replay")
    found = outcomes(replay, cases)
    replay.close()
    assert {k: (passed(o), o.cached) for k, o in found.items()} == {
        "good": (True, True),
        "bad": (False, True),
    }
    assert file.read_bytes() == before and len(judge.calls) == 2


def test_the_runs_requests_per_minute_space_the_judge_calls(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    started: list[float] = []
    judge = Judge()

    def timed(messages: list[Any], info: Any) -> Any:
        started.append(time.monotonic())
        return judge(messages, info)

    host = service(tmp_path, models=lambda: FunctionModel(timed, model_name="timed"), rpm=120)
    outcomes(host, cases)
    host.close()
    assert len(started) == 2 and abs(started[1] - started[0]) >= 0.45  # 60 s / 120


@dataclass
class StatusLine:
    """The run's status line: told each time the main thread waits on a result."""

    shown: list[str] = field(default_factory=list)

    def waiting(self, progress: Any) -> None:
        self.shown.append("waiting")

    def resumed(self) -> None:
        self.shown.append("resumed")


def test_the_status_line_is_shown_while_the_main_thread_waits_for_a_judge(tmp_path: Path) -> None:
    (good, _) = Project(tmp_path).cases("A", TWO)
    judge = Judge(gate=threading.Event())
    line = StatusLine()
    host = service(tmp_path, judge)
    host.waiting = lambda: line  # type: ignore[assignment,return-value]
    threading.Timer(0.5, judge.gate.set).start()  # type: ignore[union-attr]
    outcome = host.outcome(good)
    host.close()
    assert passed(outcome) is True
    assert line.shown[0] == "waiting" and line.shown[-1] == "resumed" and line.shown.count("resumed") == 1


# -- the task step ----------------------------------------------------------------------------

PRODUCED = """\
cases:
  - {id: made, source_narrative: hello there}
  - {id: broken, source_narrative: boom}
"""


@pytest.mark.parametrize(
    ("settings", "never"),
    [
        (
            {"task_cache": "replay"},
            "--llmjudge-task-cache=replay never runs a task. Record one with --llmjudge-task-cache=on",
        ),
        (
            {"cache": "replay", "task_cache": "replay"},
            "--llmjudge-cache=replay never runs a task unless --llmjudge-task-cache=on is passed",
        ),
    ],
    ids=["task cache replay", "cache replay"],
)
def test_a_task_cache_replay_miss_says_why_no_task_ran(
    tmp_path: Path, settings: dict[str, str], never: str
) -> None:
    task = TaskLog()
    (made, _) = Project(tmp_path).cases("T", PRODUCED, task.built())
    Project(tmp_path).write(".llmjudge/cache.sqlite", "")
    host = service(tmp_path, Judge(), **settings)
    outcome = host.outcome(made)
    host.close()
    where = tmp_path / ".llmjudge/cache.sqlite"
    task_label = "app.produce:run@1"
    message = (
        f"{made.case.location}: no cached output in {where} for this case from task {task_label}; {never}."
    )
    assert outcome.failure == JudgeFailure("task-cache-miss", message) and task.calls == []


def test_an_output_from_the_task_cache_keeps_its_task_fingerprint_and_latency(tmp_path: Path) -> None:
    task = TaskLog()
    (made, _) = Project(tmp_path).cases("T", PRODUCED, task.built())
    host = service(tmp_path, Judge())
    host.outcome(made)
    first = host.tasks.produced[made.nodeid]
    host.close()
    again = service(tmp_path, Judge())
    again.outcome(made)
    cached = again.tasks.produced[made.nodeid]
    again.close()
    assert (cached.source, cached.output) == (TASK_CACHE, "hello there") and task.calls == ["made"]
    assert (cached.task, cached.fingerprint, cached.latency) == (first.task, first.fingerprint, first.latency)
    assert cached.task == "app.produce:run@1" and cached.fingerprint and cached.latency is not None


def test_a_python_task_that_raises_is_its_cases_error_naming_the_task_then_its_frames(tmp_path: Path) -> None:
    task = TaskLog()
    (_, broken) = Project(tmp_path).cases("T", PRODUCED, task.built())
    host = service(tmp_path, Judge())
    outcome = host.outcome(broken)
    host.close()
    assert outcome.failure is not None and outcome.failure.kind == "task-error"
    first, *frames = outcome.failure.message.split("\n")
    assert first == f"{broken.case.location}: task app.produce:run@1 raised ValueError: the product broke"
    assert frames


def test_a_task_cache_replay_miss_is_an_error_with_no_model_no_cache_hit_and_no_attempt(
    tmp_path: Path,
) -> None:
    task = TaskLog()
    (made, _) = Project(tmp_path).cases("T", PRODUCED, task.built())
    Project(tmp_path).write(".llmjudge/cache.sqlite", "")
    host = service(tmp_path, Judge(), task_cache="replay")
    outcome = host.outcome(made)
    host.close()
    never = "--llmjudge-task-cache=replay never runs a task. Record one with --llmjudge-task-cache=on"
    message = (
        f"{made.case.location}: no cached output in {tmp_path / '.llmjudge/cache.sqlite'} for this case"
        f" from task app.produce:run@1; {never}."
    )
    assert outcome == Outcome(None, JudgeFailure("task-cache-miss", message), "", False, 0)


def test_closing_a_service_twice_after_a_task_ran_is_harmless(tmp_path: Path) -> None:
    task = TaskLog()
    (made, _) = Project(tmp_path).cases("T", PRODUCED, task.built())
    host = service(tmp_path, Judge())
    outcome = host.outcome(made)
    host.close()
    host.close()
    assert passed(outcome) is True and task.calls == ["made"] and host.cache_write_errors == []


def test_a_python_tasks_cached_output_belongs_to_its_own_benchmark(tmp_path: Path) -> None:
    from .fakes import python_task

    built = python_task(lambda given: f"hello from {given.benchmark}")
    project = Project(tmp_path)
    (first,) = project.cases("A", "cases:\n  - {id: same, source_narrative: hi}\n", built)
    (second,) = project.cases("B", "cases:\n  - {id: same, source_narrative: hi}\n", built)
    host = service(tmp_path, Judge())
    host.outcome(first)
    host.close()
    again = service(tmp_path, Judge())
    again.outcome(second)
    produced = again.tasks.produced[second.nodeid]
    again.close()
    assert (produced.source, produced.output) == ("task", "hello from B")


def test_a_python_task_that_sees_the_ground_truth_runs_again_when_the_truth_changes(tmp_path: Path) -> None:
    from .fakes import python_task

    built = python_task(lambda given: f"hello, {given.ground_truth}", sees_truth=True)
    project = Project(tmp_path)
    (before,) = project.cases("A", "cases:\n  - {id: same, source_narrative: hi, ground_truth: one}\n", built)
    host = service(tmp_path, Judge())
    host.outcome(before)
    host.close()
    (after,) = project.cases("A", "cases:\n  - {id: same, source_narrative: hi, ground_truth: two}\n", built)
    again = service(tmp_path, Judge())
    again.outcome(after)
    produced = again.tasks.produced[after.nodeid]
    again.close()
    assert (produced.source, produced.output) == ("task", "hello, two")


def test_a_python_task_slower_than_the_task_timeout_is_its_cases_timeout_error(tmp_path: Path) -> None:
    from .fakes import python_task

    def slow(given: Any) -> str:
        time.sleep(0.4)
        return "hello"

    (case,) = Project(tmp_path).cases(
        "A", "cases:\n  - {id: slow, source_narrative: hi}\n", python_task(slow)
    )
    host = service(tmp_path, Judge(), task_timeout=0.1)
    outcome = host.outcome(case)
    host.close()
    message = f"{case.case.location}: task app:run@1 took longer than --llmjudge-task-timeout=0.1s"
    assert outcome.failure == JudgeFailure("task-timeout", message)


def test_a_verdict_cache_whose_damage_shows_only_when_read_is_a_setup_error_naming_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_llmjudge.execution.cache import CacheError, VerdictCache

    def damaged(self: VerdictCache, keys: Any) -> Any:
        raise CacheError(f"{self.path}: not a usable verdict cache (database disk image is malformed)")

    monkeypatch.setattr(VerdictCache, "get_many", damaged)
    cases = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path, Judge())
    with pytest.raises(JudgeSetupError) as raised:
        host.schedule(cases)
    host.close()
    where = tmp_path / ".llmjudge/cache.sqlite"
    assert str(raised.value) == (
        f"--llmjudge-cache-path: {where}: not a usable verdict cache (database disk image is malformed)"
    )


# -- the estimate -----------------------------------------------------------------------------


def _estimate(
    root: Path, cases: Any, judge: Judge | None = None, **settings: Any
) -> tuple[list[Any], list[str]]:
    from pytest_llmjudge.pipeline.estimating import plan_calls

    host = service(root, judge, **settings)
    host.estimating = True
    try:
        return plan_calls(host, cases)
    finally:
        host.close()


THREE = TWO + "  - {id: new, candidate_output: hello again}\n"


def test_an_estimates_judge_tokens_use_the_benchmarks_history_style_max_tokens_and_price(
    tmp_path: Path,
) -> None:
    judge = Judge()
    host = service(tmp_path, judge)
    outcomes(host, Project(tmp_path).cases("A", TWO))
    host.close()
    from dataclasses import replace

    from pytest_llmjudge.compile.request import compile_case

    cases = [
        replace(c, request=compile_case(c.benchmark, c.sections, c.case, "short_cot"))
        for c in Project(tmp_path).cases("A", THREE)
    ]
    (plan,), problems = _estimate(tmp_path, cases, judge, max_tokens=50, price=("function:fake-judge=1/2",))
    tokens = plan.judge_tokens
    assert problems == [] and tokens is not None and len(plan.misses) == 3
    assert (tokens.output_history, tokens.default_output_tokens, tokens.max_output_tokens) == (
        (5, 5),
        300,
        50,
    )
    assert tokens.chars_per_token is not None
    assert (
        tokens.price is not None and tokens.price.describe() == "$1.0/$2.0 per Mtok in/out (--llmjudge-price)"
    )


def test_an_estimate_with_the_cache_off_knows_no_earlier_judge_call(tmp_path: Path) -> None:
    judge = Judge()
    host = service(tmp_path, judge)
    outcomes(host, Project(tmp_path).cases("A", TWO))
    host.close()
    (plan,), _ = _estimate(tmp_path, Project(tmp_path).cases("A", THREE), judge, cache="off")
    tokens = plan.judge_tokens
    assert tokens is not None and len(plan.misses) == 3 and plan.cached == 0
    assert (tokens.output_history, tokens.chars_per_token) == ((), None)


def test_an_estimate_leaves_the_verdict_cache_file_as_it_was(tmp_path: Path) -> None:
    judge = Judge()
    cases = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path, judge)
    outcomes(host, cases)
    host.close()
    file = tmp_path / ".llmjudge/cache.sqlite"
    before = file.read_bytes()
    (plan,), _ = _estimate(tmp_path, cases, judge)
    assert plan.cached == 2 and plan.misses == [] and file.read_bytes() == before


def test_an_estimate_without_a_judge_model_names_every_way_to_configure_one(tmp_path: Path) -> None:
    _, problems = _estimate(tmp_path, Project(tmp_path).cases("A", TWO))
    assert problems == [
        "no judge model is configured (--llmjudge-model, LLMJUDGE_MODEL, llmjudge_model or "
        "judge.model): the judge calls of cases without one are not counted"
    ]


def test_an_estimate_counts_a_panels_model_task_call_once_under_its_first_member(
    tmp_path: Path, judges: dict[str, Judge]
) -> None:
    from .fakes import model_task_cases

    judges["task"] = TaskModel()  # type: ignore[assignment]
    cases = model_task_cases(
        Project(tmp_path),
        "M",
        "  - {id: c0, source_narrative: alpha}\n",
        task_extra="judge:\n  panel: [fake:a, fake:b]\n",
    )
    plans, problems = _estimate(tmp_path, cases)
    assert problems == [] and [p.benchmark for p in plans] == ["M (fake:a)", "M (fake:b)"]
    assert [p.task_requests for p in plans] == [["[user]\nNarrative: alpha"], []]
    assert [p.task for p in plans] == ["fake:task", ""]


def test_an_estimate_counts_the_one_order_of_a_pair_the_cache_misses_after_the_one_it_holds(
    tmp_path: Path,
) -> None:
    from .fakes import _block

    judge = Judge()

    def first_order_only(messages: Any, info: Any) -> Any:
        from .fakes import _prompt

        if "plain one" in _block(_prompt(messages), "OutputA"):
            raise RuntimeError("the judge broke")
        return judge(messages, info)

    (win, *_) = Project(tmp_path).pairs("P", PAIRS)
    host = service(
        tmp_path, models=lambda: FunctionModel(first_order_only, model_name="fake-judge"), attempts=1
    )
    host.schedule([win])
    host.pairwise.result(win)
    host.close()
    assert judge.calls == ['{"OUTPUT_A": "BETTER one"} | {"OUTPUT_B": "plain one"}']
    (plan,), problems = _estimate(tmp_path, [win], judge)
    assert problems == [] and plan.cached == 1
    assert [(samples, '"OUTPUT_A": "plain one"' in text) for text, samples in plan.misses] == [(1, True)]


# -- re-judging stale verdicts ----------------------------------------------------------------


def _two_snapshots_cached(tmp_path: Path) -> tuple[Judge, list[Any]]:
    """A cache whose verdicts of ``good`` and ``bad`` snap-A gave, and of ``new`` snap-B."""
    judge = Judge(snapshot="snap-A")
    host = service(tmp_path, judge)
    outcomes(host, Project(tmp_path).cases("A", TWO))
    host.close()
    judge.snapshot = "snap-B"
    cases = Project(tmp_path).cases("A", THREE)
    host = service(tmp_path, judge)
    outcomes(host, cases)
    host.close()
    assert len(judge.calls) == 3
    return judge, cases


def test_a_replay_keeps_the_cached_verdicts_of_two_snapshots_under_rejudge_stale(tmp_path: Path) -> None:
    judge, cases = _two_snapshots_cached(tmp_path)
    host = service(tmp_path, judge, rejudge_stale=True, cache="replay")
    found = outcomes(host, cases)
    host.close()
    assert len(judge.calls) == 3 and host.resolved == {}
    assert {k: (passed(o), o.cached) for k, o in found.items()} == {
        "good": (True, True),
        "bad": (False, True),
        "new": (True, True),
    }


def test_a_failed_call_to_learn_the_snapshot_leaves_the_other_cached_verdicts_as_they_are(
    tmp_path: Path,
) -> None:
    judge, cases = _two_snapshots_cached(tmp_path)
    judge.broken = ("hello",)
    host = service(tmp_path, judge, rejudge_stale=True, attempts=1)
    found = outcomes(host, cases)
    host.close()
    assert judge.calls[3:] == ['{"CANDIDATE_OUTPUT": "hello"}'] and host.resolved == {}
    failure = found["good"].failure
    assert failure is not None and found["good"].verdict is None
    assert {k: (passed(o), o.cached) for k, o in found.items() if k != "good"} == {
        "bad": (False, True),
        "new": (True, True),
    }


def test_under_rejudge_stale_a_run_without_a_cached_verdict_judges_every_case(tmp_path: Path) -> None:
    judge = Judge(snapshot="snap-A")
    host = service(tmp_path, judge, rejudge_stale=True)
    found = outcomes(host, Project(tmp_path).cases("A", TWO))
    host.close()
    assert {k: (passed(o), o.cached) for k, o in found.items()} == {
        "good": (True, False),
        "bad": (False, False),
    }
    assert len(judge.calls) == 2 and host.resolved == {}


def test_a_case_whose_judge_server_starts_when_needed_is_judged_by_the_started_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    placeholder, started = Judge("placeholder"), Judge("started")
    (good, _) = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path, placeholder)
    monkeypatch.setattr(host.judges, "with_server", lambda config: replace(config, model=started.model()))
    outcome = host.outcome(good)
    host.close()
    assert (
        passed(outcome) is True
        and placeholder.calls == []
        and started.calls == ['{"CANDIDATE_OUTPUT": "hello"}']
    )


def test_a_model_tasks_prompt_is_given_its_benchmarks_code(tmp_path: Path, judges: dict[str, Judge]) -> None:
    from pytest_llmjudge.compile.request import compile_case
    from pytest_llmjudge.models.models import judge_label
    from pytest_llmjudge.tasks.build import TaskOptions, build_task

    from .fakes import Item

    model = TaskModel()
    judges["task"] = model  # type: ignore[assignment]
    project = Project(tmp_path)
    project.write(
        "prompts/task.yaml",
        'messages:\n  - role: user\n    content: "Narrative: {{ benchmark }}"\n'
        "template_variables: [benchmark]\n",
    )
    body = (
        "task:\n  model: fake:task\n  prompt_file: prompts/task.yaml\n"
        "cases:\n  - {id: c0, source_narrative: hi}\n"
    )
    benchmark, sections = project.load("M", body)
    built = build_task(benchmark, tmp_path, TaskOptions(), judge_label)
    (case,) = benchmark.cases
    item = Item(
        "benchmarks/M.yaml::M::c0", benchmark, case, compile_case(benchmark, sections, case), sections, built
    )
    host = service(tmp_path, Judge())
    host.outcome(item)
    produced = host.tasks.produced[item.nodeid]
    host.close()
    assert model.calls == ["Narrative: M"] and produced.output == "said M"


def test_a_model_task_whose_version_changed_runs_again_though_its_request_is_cached(
    tmp_path: Path, judges: dict[str, Judge]
) -> None:
    from .fakes import model_task_cases

    model = TaskModel()
    judges["task"] = model  # type: ignore[assignment]
    line = "  - {id: c0, source_narrative: alpha}\n"
    (first,) = model_task_cases(Project(tmp_path), "M", line)
    host = service(tmp_path, Judge())
    host.outcome(first)
    host.close()
    (second,) = model_task_cases(Project(tmp_path), "M", line, task_extra="task_version: '2'\n")
    again = service(tmp_path, Judge())
    again.outcome(second)
    produced = again.tasks.produced[second.nodeid]
    again.close()
    assert model.calls == ["Narrative: alpha", "Narrative: alpha"] and produced.source == "task"


def test_a_task_replay_reads_the_cache_file_without_changing_it(tmp_path: Path) -> None:
    task = TaskLog()
    (made, _) = Project(tmp_path).cases("T", PRODUCED, task.built())
    file = Project(tmp_path).write(".llmjudge/cache.sqlite", "")
    host = service(tmp_path, Judge(), cache="replay", task_cache="replay")
    outcome = host.outcome(made)
    host.close()
    assert outcome.failure is not None and outcome.failure.kind == "task-cache-miss"
    assert file.read_bytes() == b"" and task.calls == []


def test_a_python_task_runs_under_batch_on(tmp_path: Path) -> None:
    task = TaskLog()
    checks = "evaluator_type: code\nchecks:\n  - {type: contains, value: hello}\n"
    (made, _) = Project(tmp_path).cases("T", checks + PRODUCED, task.built())
    host = service(tmp_path, batch="on")  # a code case: no judge
    outcome = host.outcome(made)
    produced = host.tasks.produced[made.nodeid]
    host.close()
    assert (produced.source, produced.output) == ("task", "hello there") and task.calls == ["made"]
    assert passed(outcome) is True


def test_an_output_cache_with_a_foreign_outputs_table_is_said_once_for_the_whole_run(tmp_path: Path) -> None:
    import sqlite3
    import warnings

    from pytest_llmjudge.suite.cache_damage import CacheDamageWarning

    file = tmp_path / ".llmjudge/cache.sqlite"
    file.parent.mkdir()
    with sqlite3.connect(file) as db:
        db.execute("CREATE TABLE outputs (x)")
    db.close()
    task = TaskLog()
    body = "cases:\n  - {id: one, source_narrative: hello}\n  - {id: two, source_narrative: hello again}\n"
    cases = Project(tmp_path).cases("T", body, task.built())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        host = service(tmp_path, Judge())
        found = outcomes(host, cases)
        host.close()
    said = [str(w.message) for w in caught if issubclass(w.category, CacheDamageWarning)]
    assert len(said) == 1 and said[0].startswith(f"{file}: its outputs table has the columns x, not ")
    assert {k: passed(o) for k, o in found.items()} == {"one": True, "two": True} and task.calls == [
        "one",
        "two",
    ]


def test_a_model_task_with_its_own_base_url_is_only_ever_built_for_that_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_llmjudge.models import models
    from pytest_llmjudge.models.models import ModelConfigError

    from .fakes import model_task_cases

    server = "http://127.0.0.1:8000/v1"
    model, built = TaskModel(), []

    def build(value: Any, base_url: str | None = None, **_: Any) -> Any:
        if not isinstance(value, str):
            return value
        built.append((value, base_url))
        if base_url != server:  # as a provider SDK without its API key refuses to build
            raise ModelConfigError(f"cannot use {value!r} without its server")
        return model.model()

    monkeypatch.setattr(models, "build_model", build)
    line = "  - {id: c0, source_narrative: alpha}\n"
    (case,) = model_task_cases(Project(tmp_path), "M", line, task_extra=f"  base_url: {server}\n")
    host = service(tmp_path, Judge())
    outcome = host.outcome(case)
    produced = host.tasks.produced.get(case.nodeid)
    host.close()
    assert outcome.failure is None and produced is not None and produced.output == "said alpha"
    assert built == [("fake:task", server)] and model.calls == ["Narrative: alpha"]


@pytest.mark.parametrize("produced", [False, True], ids=["stored output", "task output"])
def test_a_judge_calls_budget_reservation_is_projected_from_the_benchmarks_earlier_answers(
    tmp_path: Path, produced: bool
) -> None:
    task = TaskLog() if produced else None
    built = task.built() if task is not None else None
    if produced:
        first = (
            "cases:\n  - {id: good, source_narrative: hello}\n  - {id: bad, source_narrative: FAIL here}\n"
        )
        then = first + "  - {id: new, source_narrative: hello again}\n"
    else:
        first, then = TWO, THREE
    judge = Judge(tokens=(10, 5))
    host = service(tmp_path, judge)
    outcomes(host, Project(tmp_path).cases("A", first, built))
    host.close()
    cases = Project(tmp_path).cases("A", then, built)
    priced = service(tmp_path, judge, budget=50.0, price=("function:fake-judge=0/1000000",))
    found = outcomes(priced, cases)
    priced.close()
    assert found["new"].failure is None and passed(found["new"]) is True
    assert len(judge.calls) == 3


def test_the_snapshots_of_two_judges_are_each_learned_from_their_own_call(
    tmp_path: Path, judges: dict[str, Judge]
) -> None:
    project = Project(tmp_path)

    def cases(body: str) -> list[Any]:
        own = {name: HEAD + f"judge:\n  model: fake:{name}\n" for name in "ab"}
        return project.cases("A", body, head=own["a"]) + project.cases("B", body, head=own["b"])

    for name in "ab":
        judges[name].snapshot = f"{name}-1"
    host = service(tmp_path)
    outcomes(host, cases(TWO))
    host.close()
    for name in "ab":
        judges[name].snapshot = f"{name}-2"
    host = service(tmp_path)
    outcomes(host, cases(THREE))  # ``new`` by the second snapshots: each judge's cache disagrees
    host.close()
    assert [len(judges[name].calls) for name in "ab"] == [3, 3]
    host = service(tmp_path, rejudge_stale=True)
    every = cases(THREE)
    host.schedule(every)
    found = [host.outcome(c) for c in every]
    host.close()
    assert {name: str(host.resolved[f"fake:{name}"].model) for name in "ab"} == {"a": "a-2", "b": "b-2"}
    assert [len(judges[name].calls) for name in "ab"] == [5, 5]  # each: one call to learn, one stale
    assert [passed(o) for o in found] == [True, False, True] * 2


@dataclass
class InFlight:
    """Calls in flight at once: each call holds for a moment, the most seen together kept."""

    now: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hold(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.1)  # long enough for another call to start, were it let in
        with self.lock:
            self.now -= 1


def test_a_judge_servers_own_slots_bound_its_calls_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    class Served(FunctionModel):
        base_url = "http://127.0.0.1:9/v1"  # the server the judge was started on

    judge, flight = Judge(), InFlight()

    def answer(messages: Any, info: Any) -> Any:
        flight.hold()
        return judge(messages, info)

    body = "cases:\n" + "".join(f"  - {{id: c{i}, candidate_output: hello {i}}}\n" for i in range(4))
    cases = Project(tmp_path).cases("A", body)
    host = service(tmp_path, Judge("placeholder"), concurrency=4)
    started = Served(answer, model_name="fake-judge")
    monkeypatch.setattr(host.judges, "with_server", lambda config: replace(config, model=started))
    host.judges.endpoint_slots["function@http://127.0.0.1:9/v1"] = 1
    found = outcomes(host, cases)
    host.close()
    assert [passed(o) for o in found.values()] == [True] * 4 and len(judge.calls) == 4
    assert flight.most == 1


def test_a_task_servers_own_slots_bound_its_task_calls_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .fakes import model_task_cases

    task, flight = TaskModel(), InFlight()

    def answer(messages: Any, info: Any) -> Any:
        flight.hold()
        return task(messages, info)

    @dataclass
    class Slow:
        def model(self) -> FunctionModel:
            return FunctionModel(answer, model_name="task")

    fake_models(monkeypatch, {"task": Slow()})
    lines = "".join(f"  - {{id: c{i}, source_narrative: alpha {i}}}\n" for i in range(4))
    cases = model_task_cases(Project(tmp_path), "M", lines)
    host = service(tmp_path, Judge())
    host.judges.endpoint_slots["function@"] = 1
    found = outcomes(host, cases)
    host.close()
    assert [passed(o) for o in found.values()] == [True] * 4 and len(task.calls) == 4
    assert flight.most == 1


def _batched_task_run(tmp_path: Path, **settings: Any) -> tuple[dict[str, Outcome], InFlight]:
    """Four code cases whose model task's calls go through a batch API (one that answers at once),
    each call held for a moment."""
    from pytest_llmjudge.models.batching import BatchJudgeModel

    from .fakes import model_task_cases

    task, flight = TaskModel(), InFlight()

    def answer(messages: Any, info: Any) -> Any:
        flight.hold()
        return task(messages, info)

    class AnsweringBatch(BatchJudgeModel):
        async def request(self, *args: Any, **kwargs: Any) -> Any:
            return await self.wrapped.request(*args, **kwargs)

    batch = AnsweringBatch(FunctionModel(answer, model_name="task"), "fake:task", "on", None, 60.0)  # type: ignore[arg-type]
    lines = "".join(f"  - {{id: c{i}, source_narrative: alpha {i}}}\n" for i in range(4))
    checks = "evaluator_type: code\nchecks:\n  - {type: contains, value: said}\n"
    cases = model_task_cases(Project(tmp_path), "M", lines, task_extra=checks)
    host = service(tmp_path, batch="on", **settings)
    host.tasks.step.model_of = lambda value, base_url: batch
    found = outcomes(host, cases)
    host.close()
    return found, flight


def test_a_batched_model_tasks_calls_are_all_in_flight_past_the_task_concurrency(tmp_path: Path) -> None:
    found, flight = _batched_task_run(tmp_path, task_concurrency=1)
    assert [passed(o) for o in found.values()] == [True] * 4
    assert flight.most > 1  # task_concurrency=1 would hold them to one at a time


def test_a_batched_model_task_call_may_run_past_the_task_timeout_within_the_batch_wait(
    tmp_path: Path,
) -> None:
    found, _ = _batched_task_run(tmp_path, task_timeout=0.05, batch_wait=5.0)
    assert [passed(o) for o in found.values()] == [True] * 4


# -- a panel's members ------------------------------------------------------------------------


def test_a_member_judges_with_its_own_server_or_the_benchmarks_and_no_panel(tmp_path: Path) -> None:
    from pytest_llmjudge.pipeline.panel import member_benchmark
    from pytest_llmjudge.suite.panel_spec import spec_members

    head = HEAD + 'judge:\n  base_url: "http://own:1/v1"\n  temperature: 0.5\n'
    head += '  panel: [fake:a, {{model: fake:b, base_url: "http://b:2/v1"}}]\n'
    benchmark, _ = Project(tmp_path).load("P1", TWO, head)
    assert benchmark.spec.judge is not None and benchmark.spec.judge.panel
    first, second = spec_members(benchmark.spec.judge.panel)
    for member, url in ((first, "http://own:1/v1"), (second, "http://b:2/v1")):
        judge = member_benchmark(benchmark, member).spec.judge
        assert judge is not None
        assert (judge.model, judge.base_url, judge.panel, judge.temperature) == (member.model, url, None, 0.5)
    assert benchmark.spec.judge.panel  # the benchmark itself keeps its panel


def test_a_panel_that_cannot_be_formed_is_judged_as_the_benchmark_itself(tmp_path: Path) -> None:
    from pytest_llmjudge.pipeline.panel import judged_as

    # at least 3 answers from the run's panel of 2: a setup error the run reports before any call
    benchmark, _ = Project(tmp_path).load("P1", TWO, HEAD + "judge:\n  min_members: 3\n")
    case = benchmark.cases[0]
    assert judged_as(benchmark, case, RunSettings(panel=("fake:a", "fake:b"))) == [("P1", case)]
    fine, _ = Project(tmp_path).load("P2", TWO, HEAD + "judge:\n  panel: [fake:a, fake:b]\n")
    named = judged_as(fine, fine.cases[0], RunSettings())
    assert [name for name, _ in named] == ["P2 (fake:a)", "P2 (fake:b)"]
