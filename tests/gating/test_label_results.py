"""Two results files measured against their human labels, without a run: which cases carry a
verdict on a label, the cases the judge turned right or wrong, the McNemar test's settings, and the
share of labels matched."""

from __future__ import annotations

from typing import Any

from pytest_llmjudge.gating.calibration import agreement, confusion
from pytest_llmjudge.gating.label_agreement import (
    Judgment,
    LabelChange,
    accuracy,
    compare_label_results,
    labelled_judgments,
)


def case(case_id: str, label: str | None, result: str, calibration: bool = False) -> dict[str, Any]:
    return {
        "id": case_id,
        "label": label,
        "result": result,
        "calibration": calibration,
        "location": f"b.yaml:{case_id}",
        "reason": f"why {case_id}",
    }


def results(*benchmarks: tuple[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"benchmarks": [{"code": code, "cases": cases} for code, cases in benchmarks]}


def test_only_labelled_cases_with_a_verdict_count_in_every_benchmark() -> None:
    found = labelled_judgments(
        results(
            ("B1", [case("a", None, "pass"), case("b", "pass", "error"), case("c", "fail", "pass")]),
            ("B2", [case("d", "fail", "skip")]),
            ("B3", [case("e", "pass", "fail"), case("f", "fail", "pass", calibration=True)]),
        )
    )
    assert found == {
        "B1": {"c": Judgment("c", "b.yaml:c", False, True, "why c")},
        "B3": {
            "e": Judgment("e", "b.yaml:e", True, False, "why e"),
            "calibration::f": Judgment("calibration::f", "b.yaml:f", False, False, "why f"),
        },
    }


def test_two_results_files_compared_case_by_case() -> None:
    before = results(
        ("OLD", [case("z", "pass", "pass")]),
        ("B1", [case(str(i), "pass", "pass") for i in range(10)] + [case("gone", "pass", "pass")]),
    )
    after_cases = [case(str(i), "pass", "fail") for i in range(8)] + [case("8", "pass", "pass")]
    after_cases += [case("9", "fail", "fail"), case("new", "fail", "fail")]  # 9: relabelled
    after = results(("NEW", [case("y", "pass", "pass")]), ("B1", after_cases))
    (comparison,) = compare_label_results(before, after, margin=0.05, alpha=0.05)
    assert comparison.benchmark == "B1"
    assert comparison.n_paired == 9 and comparison.unpaired == 3  # 9, gone, new
    assert (comparison.turned_wrong, comparison.turned_right) == (8, 0)
    assert comparison.verdict == "agreement worse"
    assert comparison.before == agreement(confusion([(True, True)] * 9))
    assert comparison.after == agreement(confusion([(True, False)] * 8 + [(True, True)]))
    assert comparison.changes[0] == LabelChange(
        "0",
        "b.yaml:0",
        True,
        Judgment("0", "b.yaml:0", True, True, "why 0"),
        Judgment("0", "b.yaml:0", True, False, "why 0"),
    )
    assert len(comparison.changes) == 8 and not comparison.changes[0].turned_right


def test_the_comparison_follows_margin_and_alpha() -> None:
    """2 of 8 labels turned wrong (McNemar p = 0.5): too few pairs to clear a 5% margin, enough for a
    90% one, and significant only at an alpha above p."""
    before = results(("B1", [case(str(i), "pass", "pass") for i in range(8)]))
    after = results(("B1", [case(str(i), "pass", "fail" if i < 2 else "pass") for i in range(8)]))

    def verdict(margin: float, alpha: float) -> str:
        (comparison,) = compare_label_results(before, after, margin=margin, alpha=alpha)
        return comparison.verdict

    assert verdict(0.05, 0.05) == "inconclusive"
    assert verdict(0.9, 0.05) == "no significant difference"
    assert verdict(0.05, 0.6) == "agreement worse"


def test_accuracy_is_the_share_of_labels_matched() -> None:
    assert accuracy(agreement(confusion([(True, True), (False, False), (False, True), (True, True)]))) == 0.75
    assert accuracy(agreement(confusion([]))) is None
