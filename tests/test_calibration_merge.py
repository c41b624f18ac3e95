"""A ``-k`` run does not shrink the stored calibration: labelled pairs merge by case, and the run
says how many labels the stored calibration rests on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_llmjudge.gating.calibration import agreement as agreement_of
from pytest_llmjudge.gating.calibration import confusion as confusion_of
from pytest_llmjudge.gating.calibration import load_calibration, merge_calibration, store_calibration
from tests.conftest import Suite
from tests.test_calibration_run import FN, FP, TN, TP, _row, calibrated

__all__ = ["calibrated"]  # the fixture, shared with test_calibration_run

LABELS = TP + FN + FP + TN


def _stored(suite: Suite) -> dict[str, object]:
    (path,) = (suite.root / ".llmjudge" / "calibration").glob("CAL1-*.json")
    data: dict[str, object] = json.loads(path.read_text())
    return data


def test_a_k_run_keeps_the_labels_it_did_not_judge(calibrated: Suite) -> None:
    assert calibrated.run().ret == 0
    assert len(_stored(calibrated)["pairs"]) == LABELS  # type: ignore[arg-type]
    # two labelled cases judged: their pairs are replaced, the other 98 stay
    result = calibrated.run("-k", "hp-0 or hf-0", "--llmjudge-results=k.json")
    output = result.stdout.str()
    assert f"CAL1: stored calibration of this judge: {LABELS} labels, 2 of them judged in this run" in output
    assert _row(output)[:2] == ["CAL1", "2"]  # this run's figures are this run's
    calibration = json.loads((calibrated.root / "k.json").read_text())["benchmarks"][0]["calibration"]
    assert (calibration["n_labels"], calibration["stored_labels"]) == (2, LABELS)
    assert len(_stored(calibrated)["pairs"]) == LABELS  # type: ignore[arg-type]
    # a run without labelled cases reuses all of them
    result = calibrated.run("-k", "not llmjudge_labelled", "--llmjudge-results=reuse.json")
    output = result.stdout.str()
    assert _row(output)[:2] == ["CAL1", str(LABELS)]
    assert f"{LABELS} labels)" in output
    calibration = json.loads((calibrated.root / "reuse.json").read_text())["benchmarks"][0]["calibration"]
    assert (calibration["source"], calibration["stored_labels"]) == ("stored", LABELS)


def test_a_full_run_says_nothing_more(calibrated: Suite) -> None:
    output = calibrated.run("--llmjudge-results=full.json").stdout.str()
    assert "stored calibration of this judge" not in output
    calibration = json.loads((calibrated.root / "full.json").read_text())["benchmarks"][0]["calibration"]
    assert calibration["stored_labels"] == LABELS


# -- the store ------------------------------------------------------------------------------------

FINGERPRINT = "f" * 64


def test_merge_replaces_the_cases_judged_now_and_keeps_the_others(tmp_path: Path) -> None:
    merge_calibration(tmp_path, FINGERPRINT, "B", {"a": (True, True), "b": (False, False)})
    stored = merge_calibration(tmp_path, FINGERPRINT, "B", {"b": (False, True), "c": (True, False)})
    assert dict(zip(stored.cases, stored.pairs, strict=True)) == {
        "a": (True, True),
        "b": (False, True),
        "c": (True, False),
    }
    assert (stored.agreement.tp, stored.agreement.fp, stored.agreement.fn) == (1, 1, 1)
    assert load_calibration(tmp_path, "B", FINGERPRINT) == stored
    # a calibration item and a release case of the same id are two labels
    stored = merge_calibration(tmp_path, FINGERPRINT, "B", {"calibration::a": (False, False)})
    assert stored.agreement.n_labels == 4


def test_a_calibration_stored_without_case_ids_is_replaced(tmp_path: Path) -> None:
    pairs = [(True, True)] * 5
    store_calibration(tmp_path, FINGERPRINT, "B", agreement_of(confusion_of(pairs)), pairs)
    stored = load_calibration(tmp_path, "B", FINGERPRINT)
    assert stored is not None and stored.cases == ()
    stored = merge_calibration(tmp_path, FINGERPRINT, "B", {"a": (False, False)})
    assert (stored.cases, stored.pairs) == (("a",), ((False, False),))


@pytest.mark.parametrize("cases", [["a"], ["a", "a"], [1, 2], "ab"])
def test_a_store_with_broken_case_ids_is_not_read(tmp_path: Path, cases: object) -> None:
    pairs = [(True, True), (False, False)]
    path = store_calibration(tmp_path, FINGERPRINT, "B", agreement_of(confusion_of(pairs)), pairs, ["x", "y"])
    data = json.loads(path.read_text())
    data["cases"] = cases
    path.write_text(json.dumps(data))
    assert load_calibration(tmp_path, "B", FINGERPRINT) is None
