"""The single-case pipeline in-process: what checks and the verdict cache settle when cases are
scheduled, what is judged (how many calls, how many samples), and the setup errors a run meets."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError
from pathlib import Path

import pytest

from pytest_llmjudge.models.judges import JudgeSetupError

from .fakes import Judge, Project, outcomes, passed, service

TWO = """\
cases:
  - {id: good, candidate_output: hello}
  - {id: bad, candidate_output: FAIL here}
"""


def test_cases_are_judged_once_then_settled_from_the_cache(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    first = service(tmp_path, judge)
    found = outcomes(first, cases)
    first.close()
    assert {k: passed(o) for k, o in found.items()} == {"good": True, "bad": False}
    assert not any(o.cached for o in found.values()) and first.cache_hits == 0
    assert sorted(judge.calls) == ['{"CANDIDATE_OUTPUT": "FAIL here"}', '{"CANDIDATE_OUTPUT": "hello"}']
    assert found["good"].model == "function:fake-judge" and found["good"].attempts == 1
    again = service(tmp_path, judge)
    found = outcomes(again, cases)
    again.close()
    assert len(judge.calls) == 2  # no new call
    assert again.cache_hits == 2 and all(o.cached for o in found.values())
    assert {k: passed(o) for k, o in found.items()} == {"good": True, "bad": False}


def test_with_the_cache_off_every_run_calls_the_judge(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    for _ in range(2):
        host = service(tmp_path, judge, cache="off")
        outcomes(host, cases)
        host.close()
    assert len(judge.calls) == 4
    assert not (tmp_path / ".llmjudge/cache.sqlite").exists()


def test_a_replay_without_a_cache_file_calls_no_judge_and_errors_each_case(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge, cache="replay")
    found = outcomes(host, cases)
    host.close()
    assert judge.calls == []
    assert all(o.failure is not None and passed(o) is None for o in found.values())
    assert not (tmp_path / ".llmjudge/cache.sqlite").exists()


def test_repeats_judge_each_case_that_many_times_and_combine_the_samples(tmp_path: Path) -> None:
    body = "judge: {repeats: 3}\ncases:\n  - {id: flaky, candidate_output: flip}\n"
    cases = Project(tmp_path).cases("R", body)
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    host.close()
    assert len(judge.calls) == 3
    first = [passed(s) for s in found["flaky"].samples]
    assert sorted(first, key=str) == [False, True, True]  # the judge alternates, call by call
    assert passed(found["flaky"]) is True  # the majority
    again = service(tmp_path, judge)
    found = outcomes(again, cases)
    again.close()
    assert len(judge.calls) == 3 and again.cache_hits == 3
    assert [passed(s) for s in found["flaky"].samples] == first  # each sample its own cache entry


def test_the_runs_repeats_apply_to_benchmarks_without_their_own(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge, repeats=2)
    found = outcomes(host, cases)
    host.close()
    assert len(judge.calls) == 4
    assert all(len(o.samples) == 2 for o in found.values())


def test_code_cases_are_decided_by_their_checks_without_any_judge(tmp_path: Path) -> None:
    body = """\
    evaluator_type: code
    checks:
      - {type: contains, value: hello}
    cases:
      - {id: has, candidate_output: hello there}
      - {id: lacks, candidate_output: goodbye}
    """
    cases = Project(tmp_path).cases("C", body)
    host = service(tmp_path)  # no judge model configured at all
    found = outcomes(host, cases)
    host.close()
    assert {k: passed(o) for k, o in found.items()} == {"has": True, "lacks": False}


def test_a_hybrid_case_whose_checks_fail_is_not_judged(tmp_path: Path) -> None:
    body = """\
    evaluator_type: hybrid
    checks:
      - {type: contains, value: hello}
    cases:
      - {id: checked, candidate_output: hello FAIL}
      - {id: refused, candidate_output: goodbye}
    """
    cases = Project(tmp_path).cases("H", body)
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, cases)
    host.close()
    assert judge.calls == ['{"CANDIDATE_OUTPUT": "hello FAIL"}']  # only the case its checks pass
    assert {k: passed(o) for k, o in found.items()} == {"checked": False, "refused": False}
    assert found["refused"].model != "function:fake-judge"


def test_manual_cases_are_never_judged(tmp_path: Path) -> None:
    body = "evaluator_type: manual_sme\ncases:\n  - {id: m, candidate_output: hello}\n"
    cases = Project(tmp_path).cases("M", body)
    judge = Judge()
    host = service(tmp_path, judge)
    host.schedule(cases)
    host.close()
    assert judge.calls == [] and host.outcomes == {} and not host.has(cases[0].nodeid)


def test_without_a_judge_model_the_run_stops_counting_the_cases_that_need_one(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path)
    with pytest.raises(JudgeSetupError, match=r"^2 case\(s\) need a judge model"):
        host.schedule(cases)
    host.close()


def test_an_xdist_worker_settles_each_case_as_the_setup_error(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path)
    host.setup_errors_per_case = True
    found = outcomes(host, cases)
    host.close()
    for outcome in found.values():
        assert outcome.failure is not None and outcome.failure.kind == "judge-setup"
        assert "need a judge model" in outcome.failure.message and outcome.attempts == 0


def test_a_benchmarks_own_unusable_judge_model_errors_only_its_cases(tmp_path: Path) -> None:
    project = Project(tmp_path)
    own = "judge: {model: 'nosuch:model'}\ncases:\n  - {id: b, candidate_output: hello}\n"
    broken = project.cases("B", own)
    fine = project.cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    found = outcomes(host, [*broken, *fine])
    host.close()
    failure = found["b"].failure
    assert failure is not None and failure.kind == "judge-setup"
    assert failure.message.startswith("benchmarks/B.yaml:") and "judge.model:" in failure.message
    assert found["b"].model == "nosuch:model" and found["b"].attempts == 0
    assert passed(found["good"]) is True and len(judge.calls) == 2


def test_an_unusable_run_wide_judge_model_stops_the_run(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    host = service(tmp_path, model="nosuch:model")
    with pytest.raises(JudgeSetupError, match=r"^judge model: "):
        host.schedule(cases)
    host.close()


def test_an_unpriced_judge_under_a_usd_budget_stops_before_any_call(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge, budget=1.0)
    with pytest.raises(JudgeSetupError, match="fake-judge"):
        host.schedule(cases)
    host.close()
    assert judge.calls == []


def test_a_priced_judge_under_a_usd_budget_is_called(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge, budget=1.0, price=("function:fake-judge=1/1",))
    found = outcomes(host, cases)
    host.close()
    assert len(judge.calls) == 2 and passed(found["good"]) is True


def test_a_token_budget_stops_the_calls_past_it(tmp_path: Path) -> None:
    body = "cases:\n" + "".join(f"  - {{id: c{i}, candidate_output: hello {i}}}\n" for i in range(6))
    cases = Project(tmp_path).cases("A", body)
    judge = Judge(tokens=(400, 100))
    host = service(tmp_path, judge, budget_tokens=1000, concurrency=1)
    found = outcomes(host, cases)
    host.close()
    stopped = [o for o in found.values() if o.failure is not None]
    assert stopped and all(o.failure is not None and o.failure.kind == "budget" for o in stopped)
    assert len(judge.calls) == len(found) - len(stopped) < 6


def test_an_unscheduled_case_is_scheduled_when_its_outcome_is_asked(tmp_path: Path) -> None:
    good, bad = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    assert not host.has(good.nodeid)
    assert passed(host.outcome(good)) is True
    assert host.has(good.nodeid) and not host.has(bad.nodeid)
    host.close()
    assert judge.calls == ['{"CANDIDATE_OUTPUT": "hello"}']


def test_a_case_scheduled_twice_is_judged_once(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    host.schedule(cases)
    host.schedule(cases)
    found = {c.case.id: host.outcome(c) for c in cases}
    host.close()
    assert len(judge.calls) == 2 and passed(found["bad"]) is False


def test_an_estimating_run_schedules_nothing(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge()
    host = service(tmp_path, judge)
    host.estimating = True
    host.schedule(cases)
    assert not host.has(cases[0].nodeid) and host.scheduler is None
    host.close()
    assert judge.calls == []


def test_a_judge_that_raises_errors_its_case_without_a_retry(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge(broken=("FAIL",))
    host = service(tmp_path, judge, attempts=3)
    found = outcomes(host, cases)
    host.close()
    assert passed(found["good"]) is True
    bad = found["bad"]
    assert bad.failure is not None and bad.verdict is None and bad.attempts == 1
    assert judge.calls.count('{"CANDIDATE_OUTPUT": "FAIL here"}') == 1


def test_an_unreadable_answer_is_retried_and_each_attempts_usage_is_billed(tmp_path: Path) -> None:
    cases = Project(tmp_path).cases("A", TWO)
    judge = Judge(garbled=("FAIL",), tokens=(10, 5))
    host = service(tmp_path, judge, attempts=3)
    found = outcomes(host, cases)
    host.close()
    bad = found["bad"]
    assert bad.failure is not None and bad.failure.kind == "invalid-output" and bad.attempts == 3
    assert judge.calls.count('{"CANDIDATE_OUTPUT": "FAIL here"}') == 3
    assert (bad.usage.input_tokens, bad.usage.output_tokens) == (30, 15)
    assert bad.retried == ("invalid-output", "invalid-output")
    again = service(tmp_path, judge, attempts=1)
    found = outcomes(again, cases)
    again.close()
    assert found["bad"].cached is False and judge.calls.count('{"CANDIDATE_OUTPUT": "FAIL here"}') == 4


def test_a_damaged_cache_file_is_one_setup_error(tmp_path: Path) -> None:
    cache = tmp_path / ".llmjudge/cache.sqlite"
    cache.parent.mkdir()
    cache.write_bytes(b"not a database" * 100)
    host = service(tmp_path, Judge())
    with pytest.raises(JudgeSetupError, match=r"^--llmjudge-cache-path: "):
        host.check_cache()


def test_the_cache_is_off_or_absent_in_a_replay_without_its_file(tmp_path: Path) -> None:
    assert service(tmp_path, cache="off").verdict_cache() is None
    assert service(tmp_path, cache="replay").verdict_cache() is None
    host = service(tmp_path)
    host.check_cache()  # creates the file, and closes it again
    assert (tmp_path / ".llmjudge/cache.sqlite").exists()
    replay = service(tmp_path, cache="replay")
    assert replay.verdict_cache() is not None
    replay.close()


def test_cancel_pending_drops_the_calls_of_every_case_but_the_kept_ones(tmp_path: Path) -> None:
    body = "judge: {repeats: 2}\n" + TWO
    good, bad = Project(tmp_path).cases("A", body)
    judge = Judge(gate=threading.Event())
    host = service(tmp_path, judge)
    host.schedule([good, bad])
    host.cancel_pending(keep={good.nodeid})
    assert judge.gate is not None
    judge.gate.set()
    outcome = host.outcome(good)  # both of its samples were kept
    assert len(outcome.samples) == 2 and passed(outcome) is True
    with pytest.raises(CancelledError):
        host.outcome(bad)
    host.close()


def test_a_benchmarks_judge_timeout_ends_a_call_that_takes_longer(tmp_path: Path) -> None:
    (case,) = Project(tmp_path).cases(
        "A", "judge: {timeout: 0.2}\ncases:\n  - {id: c, candidate_output: x}\n"
    )
    judge = Judge(gate=threading.Event())
    host = service(tmp_path, judge, attempts=1)
    outcome = host.outcome(case)
    assert judge.gate is not None
    judge.gate.set()
    host.close()
    assert outcome.failure is not None and outcome.failure.kind == "timeout"
    assert outcome.failure.message == "no answer within 0.2 s"


def test_only_cases_a_judge_decides_are_counted_as_needing_a_model(tmp_path: Path) -> None:
    project = Project(tmp_path)
    code = project.cases("C", "evaluator_type: code\nchecks:\n  - {type: contains, value: hello}\n" + TWO)
    judged = project.cases("A", "cases:\n  - {id: one, candidate_output: hello}\n")
    host = service(tmp_path)
    with pytest.raises(JudgeSetupError, match=r"^1 case\(s\) need a judge model"):
        host.schedule([*code, *judged])
    host.close()


def test_the_status_line_counts_the_cases_the_cache_settled(tmp_path: Path) -> None:
    project = Project(tmp_path)
    judge = Judge()
    first = service(tmp_path, judge)
    outcomes(first, project.cases("A", TWO))
    first.close()
    host = service(tmp_path, judge)
    cases = project.cases("A", TWO + "  - {id: new, candidate_output: hi}\n")
    host.schedule(cases)
    assert host.scheduler is not None and host.scheduler.progress.cache_hits == 2
    host.outcome(cases[2])
    host.close()


def test_without_combine_a_repeated_case_keeps_its_first_sample(tmp_path: Path) -> None:
    (case,) = Project(tmp_path).cases("R", "judge: {repeats: 2}\ncases:\n  - {id: c, candidate_output: hi}\n")
    judge = Judge()
    host = service(tmp_path, judge)
    host.combine = None
    outcome = host.outcome(case)
    host.close()
    assert len(judge.calls) == 2 and outcome.samples == () and passed(outcome) is True
    assert host.outcomes == {case.nodeid: outcome}  # the other sample is consumed
