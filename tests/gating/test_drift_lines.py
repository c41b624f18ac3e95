"""Who judged, as the run summary and the gates say it: each judge named once with a hint to pin an
alias, the judges of a benchmark counted and ordered, a benchmark judged by two snapshots of one
model string marked ``mixed judges``, and the baseline's judges read back from its results file."""

from __future__ import annotations

from pytest_llmjudge.gating.drift import (
    MIXED_WAY_OUT,
    JudgeChange,
    SeenJudge,
    is_pinned,
    judge_change,
    judge_lines,
    judges_of_results,
    judges_seen,
    mark_mixed,
    mixed,
)
from pytest_llmjudge.gating.gates import BenchmarkGate, why
from pytest_llmjudge.gating.judge_drift import JudgeDrift, drift_of, judges_counted, on_this_judge
from pytest_llmjudge.gating.panel_records import MemberRecord, PanelRecord
from pytest_llmjudge.gating.records import CaseRecord, SampleRecord
from pytest_llmjudge.gating.statistics import mcnemar_exact_p

PIN = "so that a later run is judged by the same snapshot"


def seen(requested: str, model: str, fingerprint: str | None = None) -> SeenJudge:
    return SeenJudge(requested, model, fingerprint, 1)


def test_each_judge_is_said_once_and_an_alias_gets_a_pin_hint() -> None:
    lines = judge_lines(
        [
            seen("openai:gpt-4o-mini", "gpt-4o-mini-2024-07-18", "fp_1"),
            seen("openai:gpt-4o-mini", "gpt-4o-mini-2024-07-18", "fp_1"),
            seen("openai:gpt-4o-mini", "gpt-4o-mini-2024-07-18"),
            seen("local-model", "local-model-v2"),
        ]
    )
    assert lines == [
        "judge local-model answered as local-model-v2",
        f"  local-model is an alias: pin --llmjudge-model=local-model-v2 {PIN}",
        "judge openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 (fingerprint fp_1)",
        f"  openai:gpt-4o-mini is an alias: pin --llmjudge-model=openai:gpt-4o-mini-2024-07-18 {PIN}",
        "judge openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18",
        f"  openai:gpt-4o-mini is an alias: pin --llmjudge-model=openai:gpt-4o-mini-2024-07-18 {PIN}",
    ]


def test_the_pin_hint_keeps_the_provider_and_drops_a_served_model_s_base_url() -> None:
    assert judge_lines([seen("openai:ft:gpt-4o-mini", "ft:gpt-4o-mini:acme:7")]) == [
        "judge openai:ft:gpt-4o-mini answered as ft:gpt-4o-mini:acme:7",
        f"  openai:ft:gpt-4o-mini is an alias: pin --llmjudge-model=openai:ft:gpt-4o-mini:acme:7 {PIN}",
    ]
    served = "local:qwen2.5@http://me@localhost:8080/v1"
    assert judge_lines([seen(served, "qwen2.5-7b-instruct")]) == [
        f"judge {served} answered as qwen2.5-7b-instruct",
        f"  {served} is an alias: pin --llmjudge-model=local:qwen2.5-7b-instruct {PIN}",
    ]


def test_a_model_string_that_names_its_snapshot_or_another_model_needs_no_pin() -> None:
    assert is_pinned("openai:gpt-4o-mini", "gpt-4o-mini")  # answered as itself
    assert is_pinned("anthropic:claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20241022-v2")  # dated
    assert is_pinned("openai:gpt-4o-2024-08-06", "gpt-4o-2024-08-06-ft")
    assert is_pinned("openrouter:auto", "gpt-4o-2024-08-06")  # a router: not a snapshot of its name
    assert not is_pinned("openai:gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert not is_pinned("gpt-4o-mini", "gpt-4o-mini-2024-07-18")
    assert not is_pinned("local:qwen2.5@http://me@localhost:8080", "qwen2.5-7b-instruct")
    assert judge_lines([seen("openai:gpt-4o-mini", "gpt-4o-mini")]) == [
        "judge openai:gpt-4o-mini answered as gpt-4o-mini"
    ]


def record(
    code: str, case: str, *answers: tuple[str, str | None] | None, model: str = "openai:j"
) -> CaseRecord:
    samples = tuple(
        SampleRecord(i, True)
        if answer is None
        else SampleRecord(i, True, answered_model=answer[0], answered_fingerprint=answer[1])
        for i, answer in enumerate(answers)
    )
    return CaseRecord(code, case, "pass", model=model, samples=samples)


def test_a_benchmark_s_judges_are_counted_most_verdicts_first() -> None:
    records = [
        record("B", "a", ("j-2", None), ("j-1", "fp_b"), None),
        record("B", "b", ("j-2", None), ("j-3", "fp_a"), ("j-1", "fp_b")),
        record("B", "c", ("j-2", None), ("j-3", "fp_a"), ("j-1", "fp_a")),
        record("B", "d", ("j-1", None)),
    ]
    assert judges_seen(records) == (
        SeenJudge("openai:j", "j-2", None, 3),
        SeenJudge("openai:j", "j-1", "fp_b", 2),
        SeenJudge("openai:j", "j-3", "fp_a", 2),
        SeenJudge("openai:j", "j-1", None, 1),
        SeenJudge("openai:j", "j-1", "fp_a", 1),
    )


def panel_case(case: str, *members: MemberRecord) -> CaseRecord:
    return CaseRecord(
        "B", case, "pass", model="panel", panel=PanelRecord("majority", 1, "pass", False, members)
    )


def test_a_panel_s_judges_are_its_members_under_their_own_model_strings() -> None:
    one = MemberRecord("openai:a", True, answered=(("a-1", "fp"), ("a-1", "fp")))
    other = MemberRecord("anthropic:b", True, answered=[["b-1", None]])  # type: ignore[arg-type]
    found = judges_seen([panel_case("x", one, other)])
    assert found == (SeenJudge("openai:a", "a-1", "fp", 2), SeenJudge("anthropic:b", "b-1", None, 1))
    assert not mixed(found)  # two members are two model strings, not one judge's two snapshots
    moved = MemberRecord("openai:a", True, answered=(("a-2", "fp"),))
    assert mixed(judges_seen([panel_case("x", one), panel_case("y", moved)]))


def gate(code: str) -> BenchmarkGate:
    return BenchmarkGate(code, "", 2, 2, 0, 0, 0, 0, 0.5, "threshold_gate", 1.0, None)


def test_a_benchmark_judged_by_two_snapshots_is_said_and_untrusted_under_fail_on() -> None:
    records = [
        record("MIX", "a", ("j-1", None)),
        record("MIX", "b", ("j-2", None)),
        record("ONE", "a", ("j-1", None)),
        record("ONE", "b", ("j-1", "fp")),
    ]
    gates = [gate("MIX"), gate("ONE"), gate("NONE")]
    detail = (
        "mixed judges: 1 verdict(s) of openai:j answered as j-1; 1 verdict(s) of openai:j answered as j-2; "
        + MIXED_WAY_OUT
    )
    marked, notes = mark_mixed(gates, records, None)
    assert marked == gates
    assert notes == (f"MIX: {detail} (fails under --llmjudge-fail-on)",)
    marked, notes = mark_mixed(gates, records, "regression")
    assert notes == (f"MIX: {detail}",)
    assert [g.status for g in marked] == ["untrusted", "pass", "pass"]
    assert why(marked[0]) == detail
    assert marked[1:] == gates[1:]


def test_the_baseline_s_judges_are_read_from_its_results_file() -> None:
    results = {
        "benchmarks": [
            {"code": "B1", "judges": [{"requested": "openai:j", "model": "j-1", "verdicts": 5}]},
            {"code": "B2", "judges": [{"requested": "openai:j", "model": "j-1", "fingerprint": "fp"}]},
            {"code": "B3"},
        ]
    }
    assert judges_of_results(results) == {
        "B1": (SeenJudge("openai:j", "j-1", None, 5),),
        "B2": (SeenJudge("openai:j", "j-1", "fp", 0),),
        "B3": (),
    }
    assert judges_of_results({}) == {}


def test_a_side_whose_judge_is_not_known_changes_nothing() -> None:
    known = (seen("openai:j", "j-1"),)
    assert judge_change((), known) is None
    assert judge_change(known, ()) is None
    rotated = judge_change((seen("openai:j", "j-1", "fp_1"),), (seen("openai:j", "j-1", "fp_2"),))
    assert rotated == JudgeChange(
        "openai:j answered as j-1 (fingerprint fp_1)", "openai:j answered as j-1 (fingerprint fp_2)", False
    )


def test_drift_of_a_benchmark_the_baseline_lacks_pairs_nothing() -> None:
    baseline = {
        "benchmarks": [
            {
                "code": "B1",
                "judges": [
                    {"requested": "openai:j", "model": "j-1", "verdicts": 2},
                    {"requested": "openai:j", "model": "j-2", "verdicts": 1},
                ],
                "cases": [
                    {"id": "a", "result": "pass", "calibration": False},
                    {"id": "b", "result": "pass", "calibration": False},
                    {"id": "c", "result": "fail", "calibration": False},
                    {"id": "d", "result": "pass", "calibration": False},
                ],
            }
        ]
    }
    rejudged = {"B1": {"a": True, "b": False, "c": True, "d": True}, "NEW": {"x": True}}
    first, second = drift_of(baseline, rejudged, {})
    assert first == JudgeDrift(
        "B1", 4, 1, 1, mcnemar_exact_p(1, 1), "openai:j answered as j-1 and openai:j answered as j-2", ""
    )
    assert second == JudgeDrift("NEW", 0, 0, 0, mcnemar_exact_p(0, 0), "", "")


def test_judges_given_as_answers_are_counted_most_first_then_by_name() -> None:
    assert judges_counted(
        [
            ("z:j", "a-1", "fp"),
            ("a:j", "b-1", None),
            ("a:j", "b-1", "fp"),
            ("a:j", "b-1", None),
            ("z:j", "a-1", "fp"),
            ("a:j", "b-1", "fp"),
            ("z:j", "a-1", None),
            ("a:j", "b-1", "fp-2"),
        ]
    ) == (
        SeenJudge("a:j", "b-1", None, 2),
        SeenJudge("a:j", "b-1", "fp", 2),
        SeenJudge("z:j", "a-1", "fp", 2),
        SeenJudge("a:j", "b-1", "fp-2", 1),
        SeenJudge("z:j", "a-1", None, 1),
    )


def test_every_benchmark_judged_again_carries_its_new_verdicts() -> None:
    baseline = {
        "benchmarks": [
            {"code": "KEPT", "cases": [{"id": "a", "result": "pass", "calibration": False}]},
            {"code": "AGAIN", "cases": [{"id": "a", "result": "pass", "calibration": False}]},
        ]
    }
    copied = on_this_judge(baseline, {"AGAIN": {"a": False}}, {"AGAIN": (seen("openai:j", "j-2"),)})
    kept, again = copied["benchmarks"]
    assert kept == baseline["benchmarks"][0]
    assert again["cases"][0]["result"] == "fail"
    assert again["judges"] == [{"requested": "openai:j", "model": "j-2", "fingerprint": None, "verdicts": 1}]
