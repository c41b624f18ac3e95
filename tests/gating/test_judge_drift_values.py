"""The judge's drift on the baseline's own outputs, without a run: which cases a comparison pairs,
the flips each way with their McNemar p, who judged before and after, and the baseline as this
run's judge sees it."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_llmjudge.gating.drift import SeenJudge
from pytest_llmjudge.gating.judge_drift import (
    JudgeDrift,
    drift_of,
    judges_counted,
    on_this_judge,
    release_cases,
    without_outputs,
)
from pytest_llmjudge.gating.statistics import mcnemar_exact_p

OLD = SeenJudge("openai:gpt-4o-mini", "gpt-4o-mini-2024-07-18", "fp_1", 4)
NEW = SeenJudge("openai:gpt-4o-mini", "gpt-4o-mini-2025-01-01", None, 4)


def case(case_id: str, result: str, *, calibration: bool = False, **more: Any) -> dict[str, Any]:
    return {"id": case_id, "result": result, "calibration": calibration, "produced": {"text": "o"}} | more


def baseline() -> dict[str, Any]:
    return {
        "benchmarks": [
            {
                "code": "B1",
                "judges": [OLD.to_json()],
                "cases": [
                    case("a", "pass"),
                    case("b", "pass"),
                    case("c", "fail"),
                    case("d", "pass", produced=None),
                    case("e", "error"),
                    case("f", "pass", calibration=True),
                    case("g", "pass", pairwise={"outcome": "win"}),
                ],
            },
            {"code": "B2", "cases": [case("x", "fail")]},
        ]
    }


def test_a_comparison_pairs_release_cases_that_passed_or_failed() -> None:
    assert [(code, c["id"]) for code, c in release_cases(baseline())] == [
        ("B1", "a"),
        ("B1", "b"),
        ("B1", "c"),
        ("B1", "d"),
        ("B2", "x"),
    ]
    assert without_outputs(baseline()) == ["B1::d"]


def test_flips_each_way_are_counted_with_who_judged() -> None:
    rejudged = {
        "B1": {"a": False, "b": True, "c": True, "d": None, "f": False, "zz": True},
        "B2": {"x": False},
    }
    first, second = drift_of(baseline(), rejudged, {"B1": (NEW,)})
    assert first == JudgeDrift(
        "B1",
        3,
        1,
        1,
        mcnemar_exact_p(1, 1),
        "openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 (fingerprint fp_1)",
        "openai:gpt-4o-mini answered as gpt-4o-mini-2025-01-01",
    )
    assert second == JudgeDrift("B2", 1, 0, 0, mcnemar_exact_p(0, 0), "", "")
    assert first.text() == (
        "judge drift on the baseline's outputs: 2 of 3 verdict(s) flipped (1 pass → fail, 1 fail → pass; "
        "exact McNemar p = 1); baseline judged by openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 "
        "(fingerprint fp_1), judged again by openai:gpt-4o-mini answered as gpt-4o-mini-2025-01-01"
    )
    assert second.text().endswith("baseline judged by an unknown judge, judged again by an unknown judge")
    assert first.to_dict() == {
        "benchmark": "B1",
        "rejudged": 3,
        "pass_to_fail": 1,
        "fail_to_pass": 1,
        "p_value": mcnemar_exact_p(1, 1),
        "baseline_judges": first.baseline_judges,
        "judge": first.judge,
    }


def test_a_lopsided_drift_has_a_small_p_value() -> None:
    passes = {"benchmarks": [{"code": "B", "cases": [case(str(i), "pass") for i in range(8)]}]}
    (drift,) = drift_of(passes, {"B": {str(i): False for i in range(8)}}, {})
    assert (drift.pass_to_fail, drift.fail_to_pass) == (8, 0)
    assert drift.p_value == pytest.approx(2 / 256)
    assert (
        "8 of 8 verdict(s) flipped (8 pass → fail, 0 fail → pass; exact McNemar p = 0.00781)" in drift.text()
    )


def test_judges_are_counted_most_first_then_by_name() -> None:
    answers = [("m", "b", None), ("m", "a", "fp"), ("m", "b", None), ("m", "a", None), ("m", "a", "fp")]
    assert judges_counted(answers) == (
        SeenJudge("m", "a", "fp", 2),
        SeenJudge("m", "b", None, 2),
        SeenJudge("m", "a", None, 1),
    )
    assert judges_counted([]) == ()


def test_the_baseline_on_this_judge_carries_the_new_verdicts_and_judges() -> None:
    original = baseline()
    rejudged = {"B1": {"a": False, "c": True, "d": None, "f": False}}
    moved = on_this_judge(original, rejudged, {"B1": (NEW,)})
    b1 = moved["benchmarks"][0]
    assert b1["judges"] == [NEW.to_json()]
    assert [c["result"] for c in b1["cases"]] == ["fail", "pass", "pass", "error", "error", "pass", "pass"]
    assert moved["benchmarks"][1] == original["benchmarks"][1]  # not judged again: as it was
    assert original["benchmarks"][0]["cases"][0]["result"] == "pass"  # the baseline itself is kept
    assert original["benchmarks"][0]["judges"] == [OLD.to_json()]
    assert on_this_judge(original, {"B1": {}}, {})["benchmarks"][0]["judges"] == []


def test_labelled_cases_of_a_results_file_are_the_judges_verdicts_on_them() -> None:
    from pytest_llmjudge.gating.label_agreement import Judgment, labelled_judgments

    def labelled(case_id: str, label: str | None, result: str, calibration: bool = False) -> dict[str, Any]:
        return case(
            case_id, result, calibration=calibration, label=label, location=f"b.yaml:{case_id}", reason="r"
        )

    results = {
        "benchmarks": [
            {
                "code": "B1",
                "cases": [
                    labelled("a", "pass", "fail"),  # a release case: the verdict itself
                    labelled("b", "fail", "fail"),
                    labelled("c", "pass", "pass", calibration=True),  # calibration: agreed with the label
                    labelled("d", "fail", "fail", calibration=True),  # disagreed: the judge passed it
                    labelled("e", None, "pass"),
                    labelled("f", "pass", "error"),
                ],
            },
            {"code": "B2", "cases": [labelled("x", None, "pass"), labelled("y", "fail", "skipped")]},
        ]
    }
    assert labelled_judgments(results) == {
        "B1": {
            "a": Judgment("a", "b.yaml:a", True, False, "r"),
            "b": Judgment("b", "b.yaml:b", False, False, "r"),
            "calibration::c": Judgment("calibration::c", "b.yaml:c", True, True, "r"),
            "calibration::d": Judgment("calibration::d", "b.yaml:d", False, True, "r"),
        }
    }


def test_a_change_of_judge_says_who_judged_each_run() -> None:
    from pytest_llmjudge.gating.drift import MIXED_WAY_OUT, judge_change, mixed_detail

    changed = judge_change((OLD,), (NEW,))
    assert changed is not None and changed.stop
    assert changed.text() == (
        "judge changed: baseline judged by openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 "
        "(fingerprint fp_1), this run by openai:gpt-4o-mini answered as gpt-4o-mini-2025-01-01"
    )
    rotated = SeenJudge(OLD.requested, OLD.model, "fp_2", 1)
    fingerprint = judge_change((OLD, NEW), (rotated, NEW))
    assert fingerprint is not None and not fingerprint.stop
    assert fingerprint.text() == (
        "judge fingerprint changed: baseline judged by openai:gpt-4o-mini answered as "
        "gpt-4o-mini-2024-07-18 (fingerprint fp_1) and openai:gpt-4o-mini answered as "
        "gpt-4o-mini-2025-01-01, this run by openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 "
        "(fingerprint fp_2) and openai:gpt-4o-mini answered as gpt-4o-mini-2025-01-01 "
        "(same snapshot; providers rotate serving backends, so the comparison stands)"
    )
    assert mixed_detail((OLD, NEW)) == (
        "mixed judges: 4 verdict(s) of openai:gpt-4o-mini answered as gpt-4o-mini-2024-07-18 "
        "(fingerprint fp_1); 4 verdict(s) of openai:gpt-4o-mini answered as gpt-4o-mini-2025-01-01; "
        + MIXED_WAY_OUT
    )


def test_comparisons_across_a_change_of_judge_are_marked_and_explained() -> None:
    from pytest_llmjudge.gating.drift import JUDGE_CHANGED, WAY_OUT, judged_alike
    from pytest_llmjudge.gating.records import CaseRecord, SampleRecord
    from pytest_llmjudge.gating.statistics import Comparison, Unpaired

    def comparison(code: str) -> Comparison:
        return Comparison(
            code, 0.9, 0.8, -0.1, (-0.2, 0.0), 2, 1, 0.5, 0.5, "same", Unpaired((), ()), 0.3, 10
        )

    def record(code: str, model: str, fingerprint: str | None) -> CaseRecord:
        sample = SampleRecord(0, True, answered_model=model, answered_fingerprint=fingerprint)
        return CaseRecord(code, "a", "pass", model=OLD.requested, samples=(sample,))

    baseline = {
        "benchmarks": [
            {"code": code, "judges": [OLD.to_json()], "cases": []} for code in ("SAME", "NEWSNAP", "ROTATED")
        ]
    }
    records = [
        record("SAME", OLD.model, "fp_1"),
        record("NEWSNAP", NEW.model, None),
        record("ROTATED", OLD.model, "fp_9"),
    ]
    comparisons = [comparison(code) for code in ("SAME", "NEWSNAP", "ROTATED", "UNJUDGED")]
    marked, notes = judged_alike(comparisons, records, baseline, None)
    assert marked[0] == comparisons[0] and marked[3] == comparisons[3]
    assert marked[1].verdict == JUDGE_CHANGED and marked[1].judge_change is not None
    assert marked[1].judge_change.startswith("judge changed: baseline judged by ")
    assert marked[2].verdict == "same" and marked[2].judge_change is not None
    assert marked[2].judge_change.startswith("judge fingerprint changed: ")
    assert notes == (
        f"NEWSNAP: {marked[1].judge_change} (fails under --llmjudge-fail-on); {WAY_OUT}",
        f"ROTATED: {marked[2].judge_change}",
    )
    _, strict = judged_alike(comparisons, records, baseline, "regression")
    assert strict[0] == f"NEWSNAP: {marked[1].judge_change}; {WAY_OUT}"
