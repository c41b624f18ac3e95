"""One judge per gate, in-process: cached verdicts another snapshot of the judge gave are judged
again under ``rejudge_stale`` once the run learns its snapshot, and ``rejudge_outputs`` judges
other outputs (a baseline's) with this run's judge through the cache."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_llmjudge.compile.request import compile_case
from pytest_llmjudge.models.answered import Answered
from pytest_llmjudge.models.judges import JudgeSetupError
from pytest_llmjudge.pipeline.rejudge_outputs import Rejudged, rejudge_outputs

from .fakes import Item, Judge, Project, TaskLog, fake_models, outcomes, passed, service

TWO = """\
cases:
  - {id: c0, candidate_output: hello}
  - {id: c1, candidate_output: FAIL here}
"""
THREE = TWO + "  - {id: c2, candidate_output: new one}\n"
MODEL = "function:fake-judge"


def _first_run(tmp_path: Path, body: str = TWO) -> Judge:
    judge = Judge(snapshot="snap-A")
    host = service(tmp_path, judge)
    outcomes(host, Project(tmp_path).cases("A", body))
    host.close()
    return judge


def test_a_new_snapshot_learned_on_a_needed_call_rejudges_the_stale_verdicts(tmp_path: Path) -> None:
    judge = _first_run(tmp_path)
    judge.snapshot = "snap-B"
    host = service(tmp_path, judge, rejudge_stale=True)
    found = outcomes(host, Project(tmp_path).cases("A", THREE))
    host.close()
    assert len(judge.calls) == 2 + 3  # the new case, then both stale ones
    assert host.resolved[MODEL] == Answered("snap-B")
    assert not any(o.cached for o in found.values()) and host.cache_hits == 0
    assert {k: passed(o) for k, o in found.items()} == {"c0": True, "c1": False, "c2": True}


def test_without_rejudge_stale_the_cached_verdicts_stand(tmp_path: Path) -> None:
    judge = _first_run(tmp_path)
    judge.snapshot = "snap-B"
    host = service(tmp_path, judge)
    found = outcomes(host, Project(tmp_path).cases("A", THREE))
    host.close()
    assert len(judge.calls) == 3 and found["c0"].cached and host.resolved == {}


def test_the_same_snapshot_keeps_its_cached_verdicts(tmp_path: Path) -> None:
    judge = _first_run(tmp_path)
    host = service(tmp_path, judge, rejudge_stale=True)
    found = outcomes(host, Project(tmp_path).cases("A", THREE))
    host.close()
    assert len(judge.calls) == 3 and found["c0"].cached and found["c1"].cached
    assert host.resolved[MODEL] == Answered("snap-A")


def test_with_nothing_to_call_and_one_snapshot_cached_nothing_is_learned(tmp_path: Path) -> None:
    judge = _first_run(tmp_path)
    judge.snapshot = "snap-B"
    host = service(tmp_path, judge, rejudge_stale=True)
    found = outcomes(host, Project(tmp_path).cases("A", TWO))
    host.close()
    assert len(judge.calls) == 2 and all(o.cached for o in found.values()) and host.resolved == {}


def test_cached_verdicts_of_two_snapshots_are_settled_by_judging_one_again(tmp_path: Path) -> None:
    judge = _first_run(tmp_path)  # c0, c1 by snap-A
    judge.snapshot = "snap-B"
    host = service(tmp_path, judge)
    outcomes(host, Project(tmp_path).cases("A", THREE))  # c2 by snap-B
    host.close()
    assert len(judge.calls) == 3
    host = service(tmp_path, judge, rejudge_stale=True)
    found = outcomes(host, Project(tmp_path).cases("A", THREE))
    host.close()
    assert len(judge.calls) == 3 + 2  # c0 judged again to learn the snapshot, then c1 (stale)
    assert judge.calls[3:] == ['{"CANDIDATE_OUTPUT": "hello"}', '{"CANDIDATE_OUTPUT": "FAIL here"}']
    assert host.resolved[MODEL] == Answered("snap-B")
    assert found["c2"].cached and not found["c0"].cached and not found["c1"].cached


def test_a_replay_or_a_batched_run_never_rejudges(tmp_path: Path) -> None:
    judge = _first_run(tmp_path)
    judge.snapshot = "snap-B"
    host = service(tmp_path, judge, rejudge_stale=True, cache="replay")
    found = outcomes(host, Project(tmp_path).cases("A", TWO))
    host.close()
    assert len(judge.calls) == 2 and all(o.cached for o in found.values())


def test_a_produced_outputs_stale_verdict_is_judged_again(tmp_path: Path) -> None:
    task = TaskLog()
    body = "cases:\n  - {id: c0, source_narrative: alpha}\n"
    judge = Judge(snapshot="snap-A")
    project = Project(tmp_path)
    host = service(tmp_path, judge)
    outcomes(host, project.cases("T", body, task.built()))
    host.close()
    host = service(tmp_path, judge, rejudge_stale=True, task_cache="off")
    host.resolved[MODEL] = Answered("snap-B")  # learned on an earlier call of this run
    found = outcomes(host, project.cases("T", body, task.built()))
    host.close()
    assert len(judge.calls) == 2 and not found["c0"].cached
    host = service(tmp_path, judge, rejudge_stale=True, task_cache="off")
    host.resolved[MODEL] = Answered("snap-A")
    found = outcomes(host, project.cases("T", body, task.built()))
    host.close()
    assert len(judge.calls) == 2 and found["c0"].cached


def _baseline_of(item: Item, output: str) -> Rejudged:
    case = replace(item.case, spec=item.case.spec.model_copy(update={"candidate_output": output}))
    return Rejudged(item.nodeid, item.benchmark, case, compile_case(item.benchmark, item.sections, case))


def test_rejudge_outputs_judges_other_outputs_through_the_cache(tmp_path: Path) -> None:
    good, bad = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    theirs = [_baseline_of(good, "FAIL theirs"), _baseline_of(bad, "fine theirs")]
    found = rejudge_outputs(host, theirs)
    assert {k.rsplit("::", 1)[1]: passed(o) for k, o in found.items()} == {"c0": False, "c1": True}
    assert len(judge.calls) == 2
    host.close()
    rerun = service(tmp_path, judge)
    again = rejudge_outputs(rerun, theirs)
    rerun.close()
    assert len(judge.calls) == 2 and all(o.cached for o in again.values())
    assert {passed(o) for o in again.values()} == {True, False}


def test_rejudge_outputs_combines_repeats_and_lets_checks_decide(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (repeated,) = project.cases("R", "judge: {repeats: 3}\ncases:\n  - {id: r, candidate_output: x}\n")
    (twice,) = project.cases("W", "judge: {repeats: 2}\ncases:\n  - {id: w, candidate_output: x}\n")
    (once,) = project.cases("O", "cases:\n  - {id: o, candidate_output: x}\n")
    code = "evaluator_type: code\nchecks:\n  - {type: contains, value: hello}\n"
    (checked,) = project.cases("C", code + "cases:\n  - {id: k, candidate_output: hello}\n")
    (manual,) = project.cases("M", "evaluator_type: manual_sme\ncases:\n  - {id: m, candidate_output: x}\n")
    judge = Judge()
    host = service(tmp_path, judge)
    theirs = [
        _baseline_of(manual, "x"),  # left out, and the cases after it are still judged
        _baseline_of(checked, "goodbye"),
        _baseline_of(repeated, "flip"),
        _baseline_of(twice, "hello"),
        _baseline_of(once, "hello"),
    ]
    found = rejudge_outputs(host, theirs, host.combine)
    host.close()
    assert len(judge.calls) == 3 + 2 + 1 and manual.nodeid not in found
    samples = [passed(s) for s in found[repeated.nodeid].samples]
    assert sorted(samples, key=str) == [False, True, True] and passed(found[repeated.nodeid]) is True
    assert len(found[twice.nodeid].samples) == 2 and found[once.nodeid].samples == ()
    assert passed(found[checked.nodeid]) is False
    rerun = service(tmp_path, judge)
    again = rejudge_outputs(rerun, theirs, rerun.combine)
    rerun.close()
    assert len(judge.calls) == 6 and [passed(s) for s in again[repeated.nodeid].samples] == samples


def test_rejudge_outputs_without_combine_keeps_the_first_sample(tmp_path: Path) -> None:
    (repeated,) = Project(tmp_path).cases(
        "R", "judge: {repeats: 2}\ncases:\n  - {id: r, candidate_output: x}\n"
    )
    judge = Judge()
    host = service(tmp_path, judge)
    found = rejudge_outputs(host, [_baseline_of(repeated, "hello")])
    host.close()
    assert len(judge.calls) == 2 and found[repeated.nodeid].samples == ()


def test_rejudge_outputs_leaves_out_a_case_without_a_judge(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (one,) = project.cases("A", "cases:\n  - {id: c0, candidate_output: x}\n")
    host = service(tmp_path)
    assert rejudge_outputs(host, [_baseline_of(one, "hello")]) == {}
    host.close()


def test_rejudge_outputs_judges_the_cases_after_one_it_leaves_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = Judge("b")
    fake_models(monkeypatch, {"b": judge})
    project = Project(tmp_path)
    (one,) = project.cases("A", "cases:\n  - {id: c0, candidate_output: x}\n")
    (own,) = project.cases("B", "judge: {model: 'fake:b'}\ncases:\n  - {id: c0, candidate_output: x}\n")
    host = service(tmp_path)  # no run-wide judge: A cannot be judged, B has its own
    found = rejudge_outputs(host, [_baseline_of(one, "hello"), _baseline_of(own, "hello")])
    host.close()
    assert list(found) == [own.nodeid] and passed(found[own.nodeid]) is True and len(judge.calls) == 1


def _two_snapshots_cached(tmp_path: Path) -> Judge:
    """c0 and c1 judged by snap-A, c2 by snap-B: their verdicts disagree."""
    judge = _first_run(tmp_path)
    judge.snapshot = "snap-B"
    host = service(tmp_path, judge)
    outcomes(host, Project(tmp_path).cases("A", THREE))
    host.close()
    return judge


def test_the_call_that_learns_the_snapshot_is_priced_under_a_usd_budget(tmp_path: Path) -> None:
    judge = _two_snapshots_cached(tmp_path)
    price = ("function:fake-judge=1/1",)
    host = service(tmp_path, judge, rejudge_stale=True, budget=1.0, price=price)
    found = outcomes(host, Project(tmp_path).cases("A", THREE))
    host.close()
    assert len(judge.calls) == 3 + 2 and passed(found["c1"]) is False


def test_an_unpriced_judge_under_a_usd_budget_stops_before_the_learning_call(tmp_path: Path) -> None:
    judge = _two_snapshots_cached(tmp_path)
    host = service(tmp_path, judge, rejudge_stale=True, budget=1.0)
    with pytest.raises(JudgeSetupError, match="function:fake-judge"):
        host.schedule(Project(tmp_path).cases("A", THREE))
    host.close()
    assert len(judge.calls) == 3


def test_each_judge_model_learns_its_own_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = Judge("b", snapshot="b-1")
    fake_models(monkeypatch, {"b": own})
    project = Project(tmp_path)
    body = "judge: {model: 'fake:b'}\n" + TWO
    plain = _first_run(tmp_path)  # A's cases, by the run-wide judge
    first = service(tmp_path, plain)
    outcomes(first, project.cases("B", body))
    first.close()
    own.snapshot = "b-2"
    host = service(tmp_path, plain, rejudge_stale=True)
    host.resolved[MODEL] = Answered("snap-A")  # the run-wide judge's is known already
    cases = project.cases("A", TWO) + project.cases("B", body + "  - {id: c2, candidate_output: new}\n")
    host.schedule(cases)
    found = [host.outcome(c) for c in cases]
    host.close()
    assert host.resolved["fake:b"] == Answered("b-2")
    assert len(own.calls) == 2 + 3 and len(plain.calls) == 2  # B's stale verdicts judged again
    assert [o.cached for o in found] == [True, True, False, False, False]
