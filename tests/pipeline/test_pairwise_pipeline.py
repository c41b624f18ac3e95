"""Pairwise cases in-process: each output against its baseline's, asked in both orders; identical
outputs tie with no call, a case without a baseline output is never judged, and the cache
settles both orders on a rerun."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_llmjudge.models.judges import JudgeSetupError
from pytest_llmjudge.pipeline.host import Baseline
from pytest_llmjudge.pipeline.pairwise_pipeline import PairResult, pair_key
from pytest_llmjudge.pipeline.service import JudgingService
from pytest_llmjudge.pipeline.task_step import TASK_CACHE

from .fakes import HEAD, Judge, PairItem, Project, TaskLog, fake_models, service

MIXED = """\
cases:
  - {id: win, candidate_output: BETTER one, baseline_output: plain one}
  - {id: loss, candidate_output: plain two, baseline_output: BETTER two}
  - {id: even, candidate_output: plain three, baseline_output: other three}
  - {id: same, candidate_output: same words, baseline_output: same words}
  - {id: alone, candidate_output: no baseline}
"""


def results(host: JudgingService, cases: Sequence[PairItem]) -> dict[str, PairResult]:
    host.schedule(cases)
    return {c.case.id: host.pairwise.result(c) for c in cases}


def test_each_case_is_asked_in_both_orders_and_identical_or_unpaired_ones_are_not(tmp_path: Path) -> None:
    cases = Project(tmp_path).pairs("P", MIXED)
    judge = Judge()
    host = service(tmp_path, judge)
    found = results(host, cases)
    host.close()
    assert {k: r.outcome for k, r in found.items()} == {
        "win": "win",
        "loss": "loss",
        "even": "tie",
        "same": "tie",
        "alone": None,
    }
    assert len(judge.calls) == 6  # two orders of three cases
    assert '{"OUTPUT_A": "BETTER one"} | {"OUTPUT_B": "plain one"}' in judge.calls
    assert '{"OUTPUT_A": "plain one"} | {"OUTPUT_B": "BETTER one"}' in judge.calls
    same = found["same"]
    assert same.identical and same.orders == () and same.candidate_output == "same words"
    assert same.baseline == Baseline("same words", "case file")
    assert found["alone"].unpaired and found["alone"].orders == ()
    win = found["win"]
    assert [o.order for o in win.orders] == ["candidate_first", "baseline_first"]
    assert [o.request.order for o in win.orders] == ["candidate_first", "baseline_first"]
    assert win.candidate_output == "BETTER one" and win.baseline == Baseline("plain one", "case file")
    assert win.consistent is True and win.failure is None and win.model == "function:fake-judge"
    assert [len(o.samples) for o in win.orders] == [1, 1]


def test_a_rerun_settles_both_orders_from_the_cache(tmp_path: Path) -> None:
    cases = Project(tmp_path).pairs("P", MIXED)
    judge = Judge()
    host = service(tmp_path, judge)
    results(host, cases)
    host.close()
    again = service(tmp_path, judge)
    found = results(again, cases)
    again.close()
    assert len(judge.calls) == 6 and again.cache_hits == 6
    assert found["win"].outcome == "win" and found["loss"].outcome == "loss"
    assert all(s.cached for o in found["win"].orders for s in o.samples)


def test_repeats_ask_each_order_that_many_times(tmp_path: Path) -> None:
    body = "cases:\n  - {id: win, candidate_output: BETTER one, baseline_output: plain one}\n"
    cases = Project(tmp_path).pairs("P", body)
    judge = Judge()
    host = service(tmp_path, judge, repeats=3)
    found = results(host, cases)
    host.close()
    assert len(judge.calls) == 6
    assert [len(o.samples) for o in found["win"].orders] == [3, 3] and found["win"].outcome == "win"


def test_a_judge_that_fails_an_order_errors_the_case(tmp_path: Path) -> None:
    cases = Project(tmp_path).pairs("P", MIXED)
    judge = Judge(broken=("two",))
    host = service(tmp_path, judge)
    found = results(host, cases)
    host.close()
    loss = found["loss"]
    assert loss.failure is not None and loss.outcome is None and loss.consistent is None
    assert found["win"].outcome == "win"


def test_without_a_judge_the_run_stops_before_any_call(tmp_path: Path) -> None:
    cases = Project(tmp_path).pairs("P", MIXED)
    host = service(tmp_path)
    with pytest.raises(JudgeSetupError, match="need a judge model"):
        host.schedule(cases)
    host.close()


def test_an_xdist_worker_settles_a_pair_without_a_judge_as_its_setup_error(tmp_path: Path) -> None:
    cases = Project(tmp_path).pairs("P", MIXED)
    host = service(tmp_path)
    host.setup_errors_per_case = True
    found = {c.case.id: host.pairwise.result(c) for c in cases}
    host.close()
    failure = found["win"].failure
    assert failure is not None and failure.kind == "judge-setup" and found["win"].outcome is None
    assert found["win"].baseline == Baseline("plain one", "case file")
    assert "need a judge model" in failure.message


PRODUCED = """\
cases:
  - {id: better, source_narrative: BETTER one, baseline_output: plain one}
  - {id: same, source_narrative: same words, baseline_output: same words}
  - {id: broken, source_narrative: boom, baseline_output: plain}
"""


def test_a_tasks_output_is_produced_first_then_judged_in_both_orders(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).pairs("P", PRODUCED, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    found = results(host, cases)
    produced = dict(host.tasks.produced)
    assert host.scheduler is not None and host.scheduler.progress.errors == 1  # the status line's count
    host.close()
    assert sorted(task.calls) == ["better", "broken", "same"]
    assert found["better"].outcome == "win" and found["better"].candidate_output == "BETTER one"
    assert found["same"].identical and found["same"].outcome == "tie"
    failure = found["broken"].failure
    assert failure is not None and failure.kind == "task-error" and found["broken"].outcome is None
    assert found["broken"].baseline == Baseline("plain", "case file")
    assert [o.request.order for o in found["better"].orders] == ["candidate_first", "baseline_first"]
    assert found["better"].baseline == Baseline("plain one", "case file")
    assert len(judge.calls) == 2  # the identical and the broken case are not judged
    assert produced[cases[0].nodeid].output == "BETTER one"


def test_a_cached_output_is_judged_against_the_baseline_from_the_verdict_cache(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).pairs("P", PRODUCED, task.built())
    judge = Judge()
    host = service(tmp_path, judge)
    results(host, cases)
    host.close()
    again = service(tmp_path, judge)
    found = results(again, cases)
    produced = dict(again.tasks.produced)
    again.close()
    assert task.calls.count("better") == 1 and task.calls.count("broken") == 2
    assert len(judge.calls) == 2 and found["better"].outcome == "win"
    assert produced[cases[0].nodeid].source == TASK_CACHE
    assert found["same"].identical


def test_a_task_cache_replay_miss_is_the_cases_setup_failure(tmp_path: Path) -> None:
    task = TaskLog()
    cases = Project(tmp_path).pairs("P", PRODUCED, task.built())
    judge = Judge()
    host = service(tmp_path, judge, task_cache="replay")
    found = results(host, cases)
    host.close()
    assert task.calls == [] and judge.calls == []
    failure = found["better"].failure
    assert failure is not None and failure.kind == "task-cache-miss"
    assert found["better"].baseline == Baseline("plain one", "case file")


def test_pair_keys_keep_each_order_and_sample_apart() -> None:
    keys = {pair_key("n", order, i) for order in ("a", "b") for i in range(2)}
    assert len(keys) == 4 and all(k.startswith("n") for k in keys)


PANEL = "  panel: [fake:a, fake:b, fake:c]\n"


@pytest.fixture
def members(monkeypatch: pytest.MonkeyPatch) -> dict[str, Judge]:
    judges = {name: Judge(name) for name in "abc"}
    fake_models(monkeypatch, judges)
    return judges


def panel_pairs(
    project: Project, body: str, task: TaskLog | None = None, panel: str = PANEL
) -> list[PairItem]:
    head = HEAD + "judge:\n  mode: pairwise\n" + panel
    return project.pairs("P", body, None if task is None else task.built(), head=head, mode=False)


def test_each_panel_member_asks_both_orders_and_the_panel_votes(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    cases = panel_pairs(Project(tmp_path), MIXED)
    host = service(tmp_path)
    found = results(host, cases)
    host.close()
    assert [len(members[n].calls) for n in "abc"] == [6, 6, 6]
    win = found["win"]
    assert win.outcome == "win" and win.failure is None and win.consistent is True
    assert win.model == "panel(majority, 2 of 3): fake:a, fake:b, fake:c"
    assert win.candidate_output == "BETTER one" and win.baseline == Baseline("plain one", "case file")
    assert len(win.members) == 3 and len(win.orders) == 6
    assert found["loss"].outcome == "loss" and found["same"].identical and found["alone"].unpaired
    again = service(tmp_path)
    found = results(again, cases)
    again.close()
    assert [len(members[n].calls) for n in "abc"] == [6, 6, 6] and found["win"].outcome == "win"


def test_a_panel_pair_with_too_few_members_answering_errors(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    members["b"].garbled = ("one",)
    members["c"].broken = ("one",)
    cases = panel_pairs(Project(tmp_path), MIXED)
    host = service(tmp_path, attempts=1)
    found = results(host, cases)
    host.close()
    win = found["win"]
    assert win.outcome is None and win.consistent is None
    failure = win.failure
    assert failure is not None and failure.message.startswith("only 1 of 3 panel judges answered, 2 needed")
    garbled, broken = win.members[1].failure, win.members[2].failure
    assert garbled is not None and broken is not None and garbled.kind != broken.kind
    assert failure.kind == garbled.kind  # the first member's that failed
    assert f"fake:b: {garbled}; fake:c: {broken}" in failure.message
    assert found["loss"].outcome == "loss" and found["loss"].failure is None


def test_a_panel_member_that_cannot_be_configured_is_its_error(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    panel = "  panel: [fake:a, fake:b, nosuch:x]\n"
    cases = panel_pairs(Project(tmp_path), MIXED, panel=panel)
    host = service(tmp_path)
    found = results(host, cases)
    host.close()
    win = found["win"]
    assert win.outcome == "win" and win.failure is None
    failure = win.members[2].failure
    assert failure is not None and "panel judge nosuch:x" in failure.message
    assert win.members[2].model == "nosuch:x"


def test_a_panel_pair_whose_task_runs_first(tmp_path: Path, members: dict[str, Judge]) -> None:
    task = TaskLog()
    cases = panel_pairs(Project(tmp_path), PRODUCED, task)
    host = service(tmp_path)
    found = results(host, cases)
    host.close()
    assert sorted(task.calls) == ["better", "broken", "same"]
    assert [len(members[n].calls) for n in "abc"] == [2, 2, 2]
    better = found["better"]
    assert better.outcome == "win" and len(better.members) == 3 and better.consistent is True
    assert found["same"].identical
    assert found["broken"].failure is not None and found["broken"].failure.kind == "task-error"


def test_a_pair_never_scheduled_is_judged_when_its_result_is_asked(tmp_path: Path) -> None:
    win, *_ = Project(tmp_path).pairs("P", MIXED)
    judge = Judge()
    host = service(tmp_path, judge)
    result = host.pairwise.result(win)
    assert host.pairwise.result(win) is result  # kept
    host.close()
    assert result.outcome == "win" and len(judge.calls) == 2


def test_a_judge_server_that_cannot_start_is_a_produced_pairs_setup_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = TaskLog()
    cases = Project(tmp_path).pairs("P", PRODUCED, task.built())
    judge = Judge()
    host = service(tmp_path, judge)

    def cannot_start(config: object) -> object:
        raise JudgeSetupError("the local server did not start")

    monkeypatch.setattr(host.judges, "with_server", cannot_start)
    found = results(host, cases)
    host.close()
    better = found["better"]
    assert better.failure is not None and better.failure.message == "the local server did not start"
    assert better.candidate_output == "BETTER one" and better.baseline == Baseline("plain one", "case file")
    assert better.model == "function:fake-judge" and better.outcome is None and judge.calls == []


def test_repeated_orders_of_a_produced_pair(tmp_path: Path) -> None:
    task = TaskLog()
    body = "cases:\n  - {id: better, source_narrative: BETTER one, baseline_output: plain one}\n"
    cases = Project(tmp_path).pairs("P", body, task.built())
    judge = Judge()
    host = service(tmp_path, judge, repeats=2)
    found = results(host, cases)
    host.close()
    assert task.calls == ["better"] and len(judge.calls) == 4
    better = found["better"]
    assert [len(o.samples) for o in better.orders] == [2, 2] and better.outcome == "win"
    assert [o.order for o in better.orders] == ["candidate_first", "baseline_first"]
    assert better.model == "function:fake-judge"


def test_a_pair_with_a_failed_sample_has_no_answer(tmp_path: Path) -> None:
    from pytest_llmjudge.compile.pairwise import ORDERS
    from pytest_llmjudge.judging.pairwise_verdict import PairwiseVerdict
    from pytest_llmjudge.judging.verdict import JudgeFailure, Outcome
    from pytest_llmjudge.pipeline.pairwise_pipeline import OrderAnswer

    win, *_ = Project(tmp_path).pairs("P", MIXED)
    request = win.pair_requests("BETTER one")[0]
    answer = Outcome(None, pairwise=PairwiseVerdict("A", "a"))
    failed = Outcome(None, JudgeFailure("http-500", "no"))
    assert OrderAnswer(ORDERS[0], request, (answer, answer)).answer is not None
    assert OrderAnswer(ORDERS[0], request, (answer, failed)).answer is None
    assert OrderAnswer(ORDERS[0], request, (answer, failed)).failure == failed.failure
    assert OrderAnswer(ORDERS[0], request, ()).answer is None
    assert OrderAnswer(ORDERS[0], request, (answer, Outcome(None))).answer is None


def test_each_repeated_sample_of_an_order_is_its_own_cache_entry(tmp_path: Path) -> None:
    body = "cases:\n  - {id: flaky, candidate_output: flip one, baseline_output: plain one}\n"
    cases = Project(tmp_path).pairs("P", body)
    judge = Judge()
    host = service(tmp_path, judge, repeats=3)
    first = results(host, cases)["flaky"]
    host.close()
    answers = [s.pairwise for s in first.orders[0].samples]
    assert len(judge.calls) == 6 and len({a.winner for a in answers if a is not None}) == 2
    again = service(tmp_path, judge, repeats=3)
    rerun = results(again, cases)["flaky"]
    again.close()
    assert len(judge.calls) == 6 and [s.pairwise for s in rerun.orders[0].samples] == answers


def test_an_unpriced_member_under_a_usd_budget_stops_a_produced_panel_pair_before_its_task(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    cases = panel_pairs(Project(tmp_path), PRODUCED, task)
    host = service(tmp_path, budget=1.0, price=("fake:a=1/1", "fake:b=1/1"))
    with pytest.raises(JudgeSetupError, match="fake:c"):
        host.schedule(cases)
    host.close()
    assert task.calls == []


def test_a_produced_panel_pair_with_a_member_that_cannot_be_configured(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    panel = "  panel: [fake:a, fake:b, nosuch:x]\n"
    cases = panel_pairs(Project(tmp_path), PRODUCED, task, panel=panel)
    host = service(tmp_path)
    found = results(host, cases)
    host.close()
    better = found["better"]
    assert better.outcome == "win" and better.failure is None
    failure = better.members[2].failure
    assert failure is not None and "panel judge nosuch:x" in failure.message
    assert better.members[2].model == "nosuch:x" and better.members[2].candidate_output == "BETTER one"
    assert better.members[2].baseline == Baseline("plain one", "case file")
    assert better.candidate_output == "BETTER one" and better.baseline == Baseline("plain one", "case file")


def test_a_produced_pair_whose_judge_fails_counts_as_an_error_on_the_status_line(tmp_path: Path) -> None:
    task = TaskLog()
    body = "cases:\n  - {id: c0, source_narrative: broken one, baseline_output: plain}\n"
    cases = Project(tmp_path).pairs("P", body, task.built())
    host = service(tmp_path, Judge(broken=("broken",)))
    found = results(host, cases)
    assert host.scheduler is not None and host.scheduler.progress.errors == 1
    host.close()
    assert found["c0"].failure is not None and found["c0"].model == "function:fake-judge"


def test_a_panel_pair_member_in_the_middle_that_cannot_judge_leaves_the_others_judging(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    cases = panel_pairs(Project(tmp_path), MIXED, panel="  panel: [fake:a, nosuch:x, fake:b]\n")
    host = service(tmp_path)
    found = results(host, cases)
    host.close()
    win = found["win"]
    assert [m.model for m in win.members] == ["fake:a", "nosuch:x", "fake:b"]
    assert win.members[1].candidate_output == "BETTER one"
    assert win.members[1].baseline == Baseline("plain one", "case file")
    assert win.outcome == "win" and len(members["b"].calls) == 6
