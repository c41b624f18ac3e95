"""A stored calibration vouches only for the judge snapshot that gave its pairs: the snapshots are
stored with the pairs, a run judged by another snapshot neither reuses them (it says why) nor
merges its labels into them, and a side whose snapshot is not known vouches for either."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_llmjudge.gating.calibration import (
    agreement,
    calibration_path,
    confusion,
    load_calibration,
    merge_calibration,
    same_snapshots,
    store_calibration,
)
from pytest_llmjudge.gating.calibration_run import STALE_SNAPSHOT, calibrate, stale_snapshot
from pytest_llmjudge.gating.records import CaseRecord, JudgeFacts, JudgeFingerprint, SampleRecord

JUDGE = JudgeFingerprint("openai:judge", {"temperature": 0}, "d1", "a" * 64)
PAIRS = [(True, True), (True, False), (False, False)]


def record(case: str, snapshot: str | None, label: str | None = None, judged: bool = True) -> CaseRecord:
    sample = SampleRecord(0, judged, answered_model=snapshot)
    return CaseRecord(
        "B1",
        case,
        "pass" if judged else "fail",
        case_label=label,
        judge_pass=judged if label else None,
        calibration=label is not None,
        judge=JudgeFacts(fingerprint=JUDGE),
        samples=(sample,),
    )


def labelled(snapshot: str | None) -> list[CaseRecord]:
    return [
        record("l1", snapshot, "pass", True),
        record("l2", snapshot, "fail", False),
        record("u1", snapshot),
    ]


def test_the_stored_file_names_the_snapshots_that_judged_its_pairs(tmp_path: Path) -> None:
    calibrate(labelled("j-1"), tmp_path)
    stored = json.loads(calibration_path(tmp_path, "B1", JUDGE.fingerprint).read_text(encoding="utf-8"))
    assert stored["snapshots"] == ["j-1"]
    calibrate([record("l1", None, "pass", True)], tmp_path / "unknown")
    unknown = json.loads(calibration_path(tmp_path / "unknown", "B1", JUDGE.fingerprint).read_text())
    assert "snapshots" not in unknown


def test_a_run_of_another_snapshot_does_not_reuse_the_stored_pairs(tmp_path: Path) -> None:
    calibrate(labelled("j-1"), tmp_path)
    (other,) = calibrate([record("u1", "j-2")], tmp_path)
    assert (other.source, other.agreement.n_labels, other.stored_labels) == ("run", 0, None)
    assert other.note == (
        "calibration is for another judge snapshot (stored for j-1, this run judged by j-2): "
        "judge labelled cases with this snapshot, or pin the judge to the stored one"
    )
    (same,) = calibrate([record("u1", "j-1")], tmp_path)
    assert (same.source, same.stored_labels) == ("stored", 2)
    (unknown,) = calibrate([record("u1", None)], tmp_path)
    assert unknown.source == "stored"


def test_the_stale_snapshot_note_names_every_snapshot() -> None:
    assert stale_snapshot(["j-1", "j-2"], ["j-3", "j-4"]) == (
        f"{STALE_SNAPSHOT} (stored for j-1, j-2, this run judged by j-3, j-4): "
        "judge labelled cases with this snapshot, or pin the judge to the stored one"
    )


def test_labels_of_another_snapshot_replace_the_stored_ones(tmp_path: Path) -> None:
    fingerprint = JUDGE.fingerprint
    merge_calibration(tmp_path, fingerprint, "B1", {"a": (True, True), "b": (False, False)}, ["j-1"])
    kept = merge_calibration(tmp_path, fingerprint, "B1", {"c": (True, False)}, ["j-1"])
    assert kept.cases == ("a", "b", "c") and kept.snapshots == ("j-1",)
    replaced = merge_calibration(tmp_path, fingerprint, "B1", {"d": (True, True)}, ["j-2"])
    assert replaced.cases == ("d",) and replaced.snapshots == ("j-2",)
    unknown = merge_calibration(tmp_path, fingerprint, "B1", {"e": (False, True)})
    assert unknown.cases == ("d", "e") and unknown.snapshots == ("j-2",)


def test_a_calibration_vouches_for_the_same_snapshots_or_an_unknown_side() -> None:
    assert same_snapshots(["j-1", "j-2"], ("j-2", "j-1"))
    assert same_snapshots([], ["j-1"]) and same_snapshots(["j-1"], [])
    assert not same_snapshots(["j-1"], ["j-2"])
    assert not same_snapshots(["j-1"], ["j-1", "j-2"])


def test_a_stored_snapshot_list_that_is_not_names_is_a_damaged_file(tmp_path: Path) -> None:
    path = store_calibration(tmp_path, JUDGE.fingerprint, "B1", agreement(confusion(PAIRS)), PAIRS)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert load_calibration(tmp_path, "B1", JUDGE.fingerprint) is not None
    for damaged in (["j-1", ""], "j-1", [1]):
        path.write_text(json.dumps(document | {"snapshots": damaged}), encoding="utf-8")
        assert load_calibration(tmp_path, "B1", JUDGE.fingerprint) is None
    path.write_text(json.dumps(document | {"snapshots": ["j-1"]}), encoding="utf-8")
    found = load_calibration(tmp_path, "B1", JUDGE.fingerprint)
    assert found is not None and found.snapshots == ("j-1",)


def test_pairs_that_do_not_match_their_agreement_or_cases_are_refused(tmp_path: Path) -> None:
    agree = agreement(confusion(PAIRS))
    with pytest.raises(ValueError, match=r"^the agreement does not match the pairs$"):
        store_calibration(tmp_path, JUDGE.fingerprint, "B1", agree, PAIRS[:2])
    with pytest.raises(ValueError, match=r"^one case id per pair$"):
        store_calibration(tmp_path, JUDGE.fingerprint, "B1", agree, PAIRS, ["a", "b"])
