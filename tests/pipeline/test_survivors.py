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
