"""Cases whose output a Python task produces, in-process: the task runs once per case, its output
is judged and cached, a broken task is its case's ERROR, and the output cache settles reruns."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_llmjudge.judging.verdict import JudgeFailure
from pytest_llmjudge.models.judges import JudgeSetupError
from pytest_llmjudge.pipeline.task_step import TASK, TASK_CACHE

from .fakes import Judge, Project, TaskLog, outcomes, passed, service

CASES = """\
cases:
  - {id: c0, source_narrative: alpha}
  - {id: c1, source_narrative: beta}
  - {id: c2, source_narrative: gamma}
"""


def _output(text: str) -> str:
    return f'{{"CANDIDATE_OUTPUT": "{text}"}}'


def test_outputs_come_from_the_task_and_a_rerun_calls_neither_task_nor_judge(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", CASES, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    produced = dict(host.tasks.produced)
    host.close()
    assert sorted(task.calls) == ["c0", "c1", "c2"]
    assert sorted(judge.calls) == [_output("alpha"), _output("beta"), _output("gamma")]
    assert all(passed(o) is True and not o.cached for o in found.values())
    first = produced[cases[0].nodeid]
    assert (first.output, first.source, first.task) == ("alpha", TASK, "app.produce:run@1")
    assert first.latency is not None and first.latency >= 0
    again = service(tmp_path, judge)
    found = outcomes(again, cases)
    produced = dict(again.tasks.produced)
    again.close()
    assert len(task.calls) == 3 and len(judge.calls) == 3
    assert again.cache_hits == 3 and all(o.cached for o in found.values())
    assert produced[cases[1].nodeid].source == TASK_CACHE and produced[cases[1].nodeid].output == "beta"


def test_the_judge_request_is_recompiled_with_the_produced_output(tmp_path: Path) -> None:
    task = TaskLog(suffix=" FAIL")
    cases = Project(tmp_path).cases("T", CASES, task.built())
    host = service(tmp_path, Judge())
    found = outcomes(host, cases)
    requests = dict(host.tasks.requests)
    host.close()
    assert all(passed(o) is False for o in found.values())  # the judge saw the task's output
    assert "alpha FAIL" in requests[cases[0].nodeid].output


def test_a_bumped_task_version_regenerates_and_rejudges_only_changed_outputs(tmp_path: Path) -> None:
    project = Project(tmp_path)
    task = TaskLog()
    judge = Judge()
    for version, suffix in (("1", ""), ("2", ""), ("3", " FAIL")):
        task.suffix = suffix
        host = service(tmp_path, judge)
        found = outcomes(host, project.cases("T", CASES, task.built(version)))
        host.close()
    assert len(task.calls) == 9 and len(judge.calls) == 6
    assert all(passed(o) is False for o in found.values())


def test_a_task_that_raises_errors_its_case_and_the_others_are_judged(tmp_path: Path) -> None:
    task = TaskLog()
    body = CASES.replace("source_narrative: beta", "source_narrative: boom")
    cases = Project(tmp_path).cases("T", body, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    host.close()
    failure = found["c1"].failure
    assert failure is not None and failure.kind == "task-error"
    assert "app.produce:run@1 raised ValueError: the product broke" in failure.message
    assert found["c1"].attempts == 0 and found["c1"].verdict is None and found["c1"].model == ""
    assert found["c1"].cached is False
    assert len(judge.calls) == 2 and passed(found["c0"]) is True
    again = service(tmp_path, judge)  # a failed task is never cached: it runs again
    outcomes(again, cases)
    again.close()
    assert task.calls.count("c1") == 2 and task.calls.count("c0") == 1


def test_the_task_runs_once_for_all_of_a_cases_repeats(tmp_path: Path) -> None:
    task = TaskLog()
    body = "judge: {repeats: 3}\n" + CASES
    cases = Project(tmp_path).cases("T", body, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    host.close()
    assert sorted(task.calls) == ["c0", "c1", "c2"] and len(judge.calls) == 9
    assert all(len(o.samples) == 3 for o in found.values())


def test_a_stored_output_is_judged_without_the_task_unless_regenerated(tmp_path: Path) -> None:
    task = TaskLog()
    body = "cases:\n  - {id: kept, source_narrative: alpha, candidate_output: stored}\n"
    judge = Judge()
    project = Project(tmp_path)
    host = service(tmp_path, judge)
    outcomes(host, project.cases("T", body, task.built()))
    host.close()
    assert task.calls == [] and judge.calls == [_output("stored")]
    host = service(tmp_path, judge, regenerate=True)
    outcomes(host, project.cases("T", body, task.built()))
    host.close()
    assert task.calls == ["kept"] and judge.calls[-1] == _output("alpha")


def test_with_the_output_cache_off_the_task_runs_every_time(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", CASES, task.built())
    judge = Judge()
    for _ in range(2):
        host = service(tmp_path, judge, task_cache="off")
        outcomes(host, cases)
        host.close()
    assert len(task.calls) == 6 and len(judge.calls) == 3  # the verdicts are cached still


def test_a_task_cache_replay_miss_errors_the_case_without_running_the_task(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", CASES, task.built())
    judge = Judge()
    host = service(tmp_path, judge, task_cache="replay")
    found = outcomes(host, cases)
    host.close()
    assert task.calls == [] and judge.calls == []
    for outcome in found.values():
        assert outcome.failure is not None and outcome.failure.kind == "task-cache-miss"
        assert "--llmjudge-task-cache=replay never runs a task" in outcome.failure.message


def test_a_recorded_output_is_replayed_by_a_task_cache_replay(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", CASES, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    outcomes(host, cases)
    host.close()
    replay = service(tmp_path, judge, task_cache="replay", cache="replay")
    found = outcomes(replay, cases)
    replay.close()
    assert len(task.calls) == 3 and len(judge.calls) == 3
    assert all(passed(o) is True for o in found.values())


def test_a_hybrid_case_whose_produced_output_fails_its_checks_is_not_judged(tmp_path: Path) -> None:
    task = TaskLog()
    body = "evaluator_type: hybrid\nchecks:\n  - {type: contains, value: alp}\n" + CASES
    cases = Project(tmp_path).cases("T", body, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    host.close()
    assert judge.calls == [_output("alpha")]
    assert {k: passed(o) for k, o in found.items()} == {"c0": True, "c1": False, "c2": False}


def test_a_code_case_with_a_task_needs_no_judge(tmp_path: Path) -> None:
    task = TaskLog()
    body = "evaluator_type: code\nchecks:\n  - {type: contains, value: alp}\n" + CASES
    cases = Project(tmp_path).cases("T", body, task.built())
    host = service(tmp_path)  # no judge configured
    found = outcomes(host, cases)
    host.close()
    assert sorted(task.calls) == ["c0", "c1", "c2"]
    assert {k: passed(o) for k, o in found.items()} == {"c0": True, "c1": False, "c2": False}


def test_a_task_case_without_a_judge_stops_the_run_before_its_task_runs(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", CASES, task.built())
    host = service(tmp_path)
    with pytest.raises(JudgeSetupError, match="need a judge model"):
        host.schedule(cases)
    host.close()
    assert task.calls == []


def test_a_judge_server_that_cannot_start_errors_each_produced_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", CASES, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    starts: list[str] = []

    def cannot_start(config: object) -> object:
        starts.append("start")
        raise JudgeSetupError("the local server did not start")

    monkeypatch.setattr(host.judges, "with_server", cannot_start)
    found = outcomes(host, cases)
    host.close()
    assert judge.calls == [] and len(task.calls) == 3 and starts
    for outcome in found.values():
        assert outcome.failure == JudgeFailure("judge-setup", "the local server did not start")
        assert outcome.model == "function:fake-judge" and outcome.attempts == 0 and outcome.cached is False


def test_ready_hands_back_the_cases_that_need_no_task_and_settles_the_rest(tmp_path: Path) -> None:
    task = TaskLog()
    body = """\
    cases:
      - {id: stored, candidate_output: hello}
      - {id: made, source_narrative: alpha}
    """
    stored, made = Project(tmp_path).cases("T", body, task.built())
    host = service(tmp_path, Judge())
    ready = list(host.tasks.ready([stored, made]))
    assert ready[0] is stored and ready[1] is None  # the task of ``made`` runs on the scheduler
    assert passed(host.outcome(made)) is True
    host.close()
    host = service(tmp_path, Judge())
    (cached,) = host.tasks.ready([made])
    host.close()
    assert cached is not None and cached.case.spec.candidate_output == "alpha"
    assert cached.nodeid == made.nodeid and cached.benchmark is made.benchmark


def test_a_code_case_with_a_task_is_decided_once_whatever_the_repeats(tmp_path: Path) -> None:
    task = TaskLog()
    body = "evaluator_type: code\nchecks:\n  - {type: contains, value: alp}\njudge: {repeats: 3}\n" + CASES
    cases = Project(tmp_path).cases("T", body, task.built())
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert sorted(task.calls) == ["c0", "c1", "c2"]
    assert all(o.samples == () for o in found.values()) and passed(found["c0"]) is True


def test_a_task_case_of_a_benchmark_with_an_unusable_judge_model_stops_the_run(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", "judge: {model: 'nosuch:x'}\n" + CASES, task.built())
    host = service(tmp_path, Judge())
    with pytest.raises(JudgeSetupError, match=r"^benchmarks/T.yaml:\d+:\d+: judge.model: judge model: "):
        host.schedule(cases)
    host.close()
    assert task.calls == []


def test_a_task_case_under_an_unusable_run_wide_judge_model_stops_the_run(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).cases("T", CASES, task.built())
    host = service(tmp_path, model="nosuch:x")
    with pytest.raises(JudgeSetupError, match=r"^judge model: "):
        host.schedule(cases)
    host.close()
    assert task.calls == []


def test_served_starts_a_judges_server_once_and_remembers_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    (case,) = Project(tmp_path).cases("T", "cases:\n  - {id: c0, candidate_output: x}\n")
    host = service(tmp_path, Judge())
    config = host.judges.config(case.benchmark)
    served = replace(config)
    starts: list[object] = []

    def start(asked: object) -> object:
        starts.append(asked)
        return served

    monkeypatch.setattr(host.judges, "with_server", start)
    assert asyncio.run(host.tasks.served(config)) is served
    assert asyncio.run(host.tasks.served(config)) is served and starts == [config]

    def cannot_start(asked: object) -> object:
        starts.append(asked)
        raise JudgeSetupError("the local server did not start")

    fresh = service(tmp_path, Judge())
    monkeypatch.setattr(fresh.judges, "with_server", cannot_start)
    config = fresh.judges.config(case.benchmark)
    for _ in range(2):
        with pytest.raises(JudgeFailure) as raised:
            asyncio.run(fresh.tasks.served(config))
        assert raised.value == JudgeFailure("judge-setup", "the local server did not start")
    assert len(starts) == 2  # one start that worked, one that failed: never tried again
    host.close()
    fresh.close()


def test_a_manual_case_runs_no_task_and_asks_no_judge(tmp_path: Path) -> None:
    task = TaskLog()
    body = "evaluator_type: manual_sme\ncases:\n  - {id: c0, source_narrative: alpha}\n"
    cases = Project(tmp_path).cases("M", body, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    host.schedule(cases)
    assert not host.has(cases[0].nodeid)
    host.close()
    assert task.calls == [] and judge.calls == []
    alone = service(tmp_path)  # no judge model configured: nothing needs one
    alone.schedule(cases)
    alone.close()
    assert task.calls == []


def test_each_sample_of_a_produced_output_is_its_own_cache_entry(tmp_path: Path) -> None:
    task = TaskLog(suffix=" flip")
    body = "judge: {repeats: 2}\ncases:\n  - {id: c0, source_narrative: alpha}\n"
    cases = Project(tmp_path).cases("T", body, task.built())
    judge = Judge()
    host = service(tmp_path, judge, task_cache="off")
    first = [passed(s) for s in outcomes(host, cases)["c0"].samples]
    host.close()
    assert sorted(first, key=str) == [False, True]
    again = service(tmp_path, judge, task_cache="off")  # the task runs again: judge_now settles
    rerun = [passed(s) for s in outcomes(again, cases)["c0"].samples]
    again.close()
    assert len(judge.calls) == 2 and len(task.calls) == 2 and rerun == first
