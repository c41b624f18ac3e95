"""Panel cases in-process: each member judges on its own (its verdicts cached as a single
judge's), repeats apply per member, the panel votes, and a member that cannot judge is its ERROR."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_llmjudge.models.judges import JudgeSetupError
from pytest_llmjudge.pipeline.panel import (
    member_key,
    pair_vote,
    panel_label,
    too_few_answered,
)

from .fakes import (
    Judge,
    Project,
    TaskLog,
    TaskModel,
    fake_models,
    model_task_cases,
    outcomes,
    passed,
    service,
)

PANEL = "judge:\n  panel: [fake:a, fake:b, fake:c]\n"
CASES = """\
cases:
  - {id: good, candidate_output: hello}
  - {id: bad, candidate_output: FAIL here}
"""


@pytest.fixture
def members(monkeypatch: pytest.MonkeyPatch) -> dict[str, Judge]:
    judges = {name: Judge(name) for name in "abcd"}
    fake_models(monkeypatch, judges)
    return judges


def fake_models_with_task(members: dict[str, Judge], model: TaskModel) -> None:
    """``fake:task`` as well as the members (``fake_models`` reads the mapping at each build)."""
    members["task"] = model  # type: ignore[assignment]


def test_each_member_judges_each_case_and_the_panel_votes(tmp_path: Path, members: dict[str, Judge]) -> None:
    cases = Project(tmp_path).cases("P", PANEL + CASES)
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert [len(members[n].calls) for n in "abcd"] == [2, 2, 2, 0]
    assert {k: passed(o) for k, o in found.items()} == {"good": True, "bad": False}
    good = found["good"]
    assert good.model == "panel(majority, 2 of 3): fake:a, fake:b, fake:c"
    assert [m.model for m in good.members] == ["fake:a", "fake:b", "fake:c"]
    assert not good.cached and good.usage.input_tokens == 30  # every member's call counted


def test_a_rerun_and_a_new_member_reuse_the_cached_verdicts(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    project = Project(tmp_path)
    host = service(tmp_path)
    outcomes(host, project.cases("P", PANEL + CASES))
    host.close()
    again = service(tmp_path)
    found = outcomes(again, project.cases("P", PANEL + CASES))
    again.close()
    assert [len(members[n].calls) for n in "abc"] == [2, 2, 2] and again.cache_hits == 6
    assert all(o.cached for o in found.values())
    grown = "judge:\n  panel: [fake:a, fake:b, fake:c, fake:d]\n"
    third = service(tmp_path)
    found = outcomes(third, project.cases("P", grown + CASES))
    third.close()
    assert [len(members[n].calls) for n in "abcd"] == [2, 2, 2, 2]  # only the new member is asked
    assert passed(found["good"]) is True


def test_a_single_judges_verdicts_serve_the_same_model_in_a_panel(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    project = Project(tmp_path)
    single = service(tmp_path)
    outcomes(single, project.cases("P", "judge: {model: 'fake:a'}\n" + CASES))
    single.close()
    panel = service(tmp_path)
    outcomes(panel, project.cases("P", PANEL + CASES))
    panel.close()
    assert [len(members[n].calls) for n in "abc"] == [2, 2, 2]
    assert panel.cache_hits == 2


def test_repeats_apply_to_each_member(tmp_path: Path, members: dict[str, Judge]) -> None:
    cases = Project(tmp_path).cases("P", PANEL.replace("judge:\n", "judge:\n  repeats: 2\n") + CASES)
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert [len(members[n].calls) for n in "abc"] == [4, 4, 4]
    assert all(len(m.samples) == 2 for m in found["good"].members)


def test_a_member_that_cannot_be_configured_is_its_error_and_the_others_judge(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    panel = "judge:\n  panel: [fake:a, nosuch:x, fake:b]\n"
    cases = Project(tmp_path).cases("P", panel + CASES)
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert [len(members[n].calls) for n in "ab"] == [2, 2]
    good = found["good"]
    assert passed(good) is True
    assert [m.model for m in good.members] == ["fake:a", "nosuch:x", "fake:b"]
    failure = good.members[1].failure
    assert good.members[1].attempts == 0
    assert failure is not None and failure.kind == "judge-setup"
    assert "benchmarks/P.yaml" in failure.message and "panel judge nosuch:x" in failure.message


def test_too_few_members_answering_errors_the_case_naming_each_failure(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    members["b"].broken = ("hello",)
    members["c"].broken = ("hello",)
    cases = Project(tmp_path).cases("P", PANEL + CASES)
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    failure = found["good"].failure
    assert failure is not None and failure.message.startswith("only 1 of 3 panel judges answered, 2 needed")
    assert passed(found["bad"]) is False


def test_a_panel_whose_min_members_exceeds_its_size_stops_the_run(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    cases = Project(tmp_path).cases(
        "P", CASES, head="code: {code}\nconcept: c\ninclusion_criteria: Apply.\njudge: {{min_members: 3}}\n"
    )
    host = service(tmp_path, panel=("fake:a", "fake:b"))
    with pytest.raises(JudgeSetupError, match="min_members is 3 but the panel has 2"):
        host.schedule(cases)
    host.close()
    assert members["a"].calls == []


def test_the_runs_panel_judges_benchmarks_without_their_own_judge(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    cases = Project(tmp_path).cases("P", CASES)
    host = service(tmp_path, panel=("fake:a", "fake:b"), panel_rule="unanimous")
    found = outcomes(host, cases)
    host.close()
    assert [len(members[n].calls) for n in "ab"] == [2, 2]
    assert found["good"].model == "panel(unanimous, 2 of 2): fake:a, fake:b"


def test_a_panel_case_has_no_single_judge_to_ask(tmp_path: Path, members: dict[str, Judge]) -> None:
    (case, _) = Project(tmp_path).cases("P", PANEL + CASES)
    host = service(tmp_path)
    with pytest.raises(JudgeSetupError, match="P is judged by a panel: each member is its own judge"):
        host.judge_config(case)
    host.close()


def test_a_tasks_output_is_produced_once_then_judged_by_every_member(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    body = PANEL + "cases:\n  - {id: c0, source_narrative: alpha}\n  - {id: c1, source_narrative: boom}\n"
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert sorted(task.calls) == ["c0", "c1"]
    assert [members[n].calls for n in "abc"] == [['{"CANDIDATE_OUTPUT": "alpha"}']] * 3
    assert passed(found["c0"]) is True and len(found["c0"].members) == 3
    failure = found["c1"].failure
    assert failure is not None and failure.kind == "task-error"
    assert (found["c1"].model, found["c1"].cached, found["c1"].attempts) == ("", False, 0)
    again = service(tmp_path)
    found = outcomes(again, cases)
    again.close()
    assert task.calls.count("c0") == 1 and len(members["a"].calls) == 1 and found["c0"].cached


def test_a_hybrid_panel_case_whose_produced_output_fails_its_checks_is_not_judged(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    body = (
        "evaluator_type: hybrid\nchecks:\n  - {type: contains, value: alp}\n"
        + PANEL
        + "cases:\n  - {id: c0, source_narrative: alpha}\n  - {id: c1, source_narrative: beta}\n"
    )
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert [len(members[n].calls) for n in "abc"] == [1, 1, 1]
    assert {k: passed(o) for k, o in found.items()} == {"c0": True, "c1": False}
    assert found["c1"].members == ()


def test_a_task_panel_member_that_cannot_be_configured_is_its_error(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    body = "judge:\n  panel: [fake:a, fake:b, nosuch:x]\ncases:\n  - {id: c0, source_narrative: alpha}\n"
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert passed(found["c0"]) is True
    failure = found["c0"].members[2].failure
    assert failure is not None and "panel judge nosuch:x" in failure.message


def test_pair_votes_by_rule() -> None:
    assert pair_vote(["win", "win", "loss"], "majority", 2) == "win"
    assert pair_vote(["win", "loss"], "majority", 2) == "inconsistent"  # no more than half
    assert pair_vote(["win", "win", "loss", "loss"], "majority", 2) == "inconsistent"
    assert pair_vote(["win", "loss", "tie"], "majority", 2) == "inconsistent"
    assert pair_vote(["win", "inconsistent", "inconsistent"], "majority", 2) == "tie"
    assert pair_vote(["win", "tie", None], "unanimous", 2) == "tie"
    assert pair_vote(["loss", "win", None], "any", 2) == "win"
    assert pair_vote(["win", None, None], "any", 2) is None
    assert pair_vote(["win", None], "any", 1) == "win"
    assert pair_vote([None, None], "any", 0) is None


def test_too_few_answered_names_members_that_failed_alike_together() -> None:
    text = too_few_answered(1, 3, 2, [("b", "http-400: no"), ("c", "http-400: no")])
    assert text == "only 1 of 3 panel judges answered, 2 needed: b, c: http-400: no"
    two = too_few_answered(0, 2, 2, [("a", "x"), ("b", "y")])
    assert two == "only 0 of 2 panel judges answered, 2 needed: a: x; b: y"


def test_labels_and_keys_of_panel_members() -> None:
    assert panel_label("any", 1, ["a", "b"]) == "panel(any, 1 of 2): a, b"
    assert member_key("n", 1, 0) != member_key("n", 0, 1) != member_key("n", 0, 0)


def test_a_code_benchmark_with_a_panel_and_a_task_is_decided_by_its_checks(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    body = (
        "evaluator_type: code\nchecks:\n  - {type: contains, value: alp}\n"
        + PANEL
        + "cases:\n  - {id: c0, source_narrative: alpha}\n  - {id: c1, source_narrative: beta}\n"
    )
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert sorted(task.calls) == ["c0", "c1"] and all(members[n].calls == [] for n in "abc")
    assert {k: passed(o) for k, o in found.items()} == {"c0": True, "c1": False}


def test_panel_cases_scheduled_after_a_code_case_still_run_their_task_first(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    code = (
        "evaluator_type: code\nchecks:\n  - {type: contains, value: alp}\n"
        + "cases:\n  - {id: k0, source_narrative: alpha}\n"
    )
    project = Project(tmp_path)
    cases = project.cases("K", code, task.built()) + project.cases(
        "P", PANEL + "cases:\n  - {id: c0, source_narrative: alpha}\n", task.built()
    )
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert passed(found["k0"]) is True and passed(found["c0"]) is True
    assert sorted(task.calls) == ["c0", "k0"] and [len(members[n].calls) for n in "abc"] == [1, 1, 1]


def test_a_panel_case_whose_task_cannot_run_errors_without_a_call(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    body = PANEL + "cases:\n  - {id: c0, source_narrative: alpha}\n"
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path, task_cache="replay")
    found = outcomes(host, cases)
    host.close()
    failure = found["c0"].failure
    assert failure is not None and failure.kind == "task-cache-miss"
    assert task.calls == [] and all(members[n].calls == [] for n in "abc")


def test_repeats_of_a_produced_panel_case_apply_to_each_member(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    body = (
        PANEL.replace("judge:\n", "judge:\n  repeats: 2\n")
        + "cases:\n  - {id: c0, source_narrative: alpha}\n"
    )
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert task.calls == ["c0"] and [len(members[n].calls) for n in "abc"] == [2, 2, 2]
    assert all(len(m.samples) == 2 for m in found["c0"].members)


def test_each_sample_of_a_produced_panel_case_is_its_own_cache_entry(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog(suffix=" flip")
    body = (
        PANEL.replace("judge:\n", "judge:\n  repeats: 2\n")
        + "cases:\n  - {id: c0, source_narrative: alpha}\n"
    )
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path)
    first = outcomes(host, cases)["c0"]
    host.close()
    verdicts = [[passed(s) for s in m.samples] for m in first.members]
    assert all(sorted(v, key=str) == [False, True] for v in verdicts)  # each judge alternates
    again = service(tmp_path)
    rerun = outcomes(again, cases)["c0"]
    again.close()
    assert [len(members[n].calls) for n in "abc"] == [2, 2, 2]
    assert [[passed(s) for s in m.samples] for m in rerun.members] == verdicts


def test_a_panel_case_whose_model_task_runs_first(tmp_path: Path, members: dict[str, Judge]) -> None:
    model = TaskModel()
    fake_models_with_task(members, model)
    cases = model_task_cases(
        Project(tmp_path), "P", "  - {id: c0, source_narrative: alpha}\n", task_extra=PANEL
    )
    host = service(tmp_path)
    found = outcomes(host, cases)
    host.close()
    assert model.calls == ["Narrative: alpha"] and passed(found["c0"]) is True
    assert [members[n].calls for n in "abc"] == [['{"CANDIDATE_OUTPUT": "said alpha"}']] * 3


def test_a_judge_server_that_cannot_start_is_each_members_error(
    tmp_path: Path, members: dict[str, Judge], monkeypatch: pytest.MonkeyPatch
) -> None:
    task = TaskLog()
    body = PANEL + "cases:\n  - {id: c0, source_narrative: alpha}\n"
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path)

    def cannot_start(config: object) -> object:
        raise JudgeSetupError("the local server did not start")

    monkeypatch.setattr(host.judges, "with_server", cannot_start)
    found = outcomes(host, cases)
    host.close()
    outcome = found["c0"]
    assert outcome.failure is not None and "the local server did not start" in outcome.failure.message
    assert [m.model for m in outcome.members] == ["fake:a", "fake:b", "fake:c"]
    assert all(m.attempts == 0 and m.cached is False for m in outcome.members)
    assert all(members[n].calls == [] for n in "abc")


def test_an_unpriced_member_under_a_usd_budget_stops_a_task_case_before_its_task(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    task = TaskLog()
    body = PANEL + "cases:\n  - {id: c0, source_narrative: alpha}\n"
    cases = Project(tmp_path).cases("P", body, task.built())
    host = service(tmp_path, budget=1.0, price=("fake:a=1/1", "fake:b=1/1"))
    with pytest.raises(JudgeSetupError, match="fake:c"):
        host.schedule(cases)
    host.close()
    assert task.calls == []


def test_each_sample_of_a_panel_member_is_its_own_cache_entry(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    body = (
        PANEL.replace("judge:\n", "judge:\n  repeats: 2\n") + "cases:\n  - {id: c0, candidate_output: flip}\n"
    )
    cases = Project(tmp_path).cases("P", body)
    host = service(tmp_path)
    first = outcomes(host, cases)["c0"]
    host.close()
    verdicts = [[passed(s) for s in m.samples] for m in first.members]
    assert all(sorted(v, key=str) == [False, True] for v in verdicts)
    again = service(tmp_path)
    rerun = outcomes(again, cases)["c0"]
    again.close()
    assert [len(members[n].calls) for n in "abc"] == [2, 2, 2]
    assert [[passed(s) for s in m.samples] for m in rerun.members] == verdicts


def test_without_combine_a_panel_case_keeps_its_first_members_outcome(
    tmp_path: Path, members: dict[str, Judge]
) -> None:
    members["a"].broken = ("hello",)
    (good, _) = Project(tmp_path).cases("P", PANEL + CASES)
    host = service(tmp_path)
    host.panel.combine = None
    outcome = host.outcome(good)
    host.close()
    assert outcome.model == "fake:a" and outcome.failure is not None and outcome.members == ()
