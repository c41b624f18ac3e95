"""A run's calibration from its records alone (no pytest run): the labelled pairs, the stored
calibration that follows the judge, the gates it decides and the terminal's table."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_llmjudge.gating.calibration import calibration_path
from pytest_llmjudge.gating.calibration_run import (
    STALE,
    BenchmarkCalibration,
    Disagreement,
    apply_calibration,
    calibrate,
    calibration_summary,
    calibration_table,
    disagreement_lines,
    fingerprint_of,
    gate_rule_of,
    gated_records,
)
from pytest_llmjudge.gating.gates import BenchmarkGate, benchmark_gates
from pytest_llmjudge.gating.records import CaseRecord, JudgeFacts, JudgeFingerprint

JUDGE = JudgeFingerprint("openai:judge", {"temperature": 0}, "d1", "a" * 64)
OTHER_JUDGE = JudgeFingerprint("openai:judge", {"temperature": 0}, "d2", "b" * 64)


def record(
    case: str,
    result: str,
    label: str | None = None,
    judge_pass: bool | None = None,
    *,
    code: str = "B1",
    judge: JudgeFingerprint | None = JUDGE,
    gate: str = "point",
    **fields: object,
) -> CaseRecord:
    facts = JudgeFacts(fingerprint=judge, gate=gate)
    return CaseRecord(
        code,
        case,
        result,
        nodeid=f"{code}::{case}",
        location=f"benchmarks/{code}.yaml:{len(case)}",
        case_label=label,
        judge_pass=judge_pass,
        judge=facts,
        reason=f"judged {case}",
        **fields,  # type: ignore[arg-type]
    )


def labelled(code: str = "B1", gate: str = "point", **fields: object) -> list[CaseRecord]:
    """3 true passes, 1 missed pass, 2 true fails, 1 false pass (calibration items), then 3 of
    the benchmark's own cases without a label: 2 pass, 1 fails."""
    rows = [("tp1", "pass", True), ("tp2", "pass", True), ("tp3", "pass", True), ("fn", "pass", False)]
    rows += [("tn1", "fail", False), ("tn2", "fail", False), ("fp", "fail", True)]
    made = [
        record(
            case,
            "pass" if (label == "pass") == judged else "fail",
            label,
            judged,
            code=code,
            gate=gate,
            calibration=True,
            **fields,
        )
        for case, label, judged in rows
    ]
    made += [
        record(c, r, code=code, gate=gate, **fields)
        for c, r in (("u1", "pass"), ("u2", "pass"), ("u3", "fail"))
    ]
    return made


def test_fingerprint_and_gate_rule_of_a_record() -> None:
    assert fingerprint_of(record("a", "pass")) == "a" * 64
    assert fingerprint_of(record("a", "pass", judge=None)) == ""
    assert fingerprint_of(CaseRecord("B1", "a", "pass")) == ""
    assert gate_rule_of(record("a", "pass", gate="corrected")) == "corrected"
    assert gate_rule_of(record("a", "pass", gate="")) == "point"
    assert gate_rule_of(CaseRecord("B1", "a", "pass")) == "point"


def test_labelled_pairs_give_the_agreement_and_are_stored(tmp_path: Path) -> None:
    (calibration,) = calibrate(labelled(min_tpr=0.9, min_tnr=0.5, min_labels=5), tmp_path)
    figures = calibration.to_dict()
    assert (figures["tp"], figures["fn"], figures["tn"], figures["fp"], figures["n_labels"]) == (
        3,
        1,
        2,
        1,
        7,
    )
    assert (figures["source"], figures["stored_labels"], figures["trusted"]) == ("run", 7, False)
    assert figures["detail"] == "judge untrusted: TPR 0.75 < 0.90 (3/4), 7 labels"
    assert figures["corrected_pass_rate"] == pytest.approx((2 / 3 + 2 / 3 - 1) / (0.75 + 2 / 3 - 1))
    assert figures["chance"] is False and len(figures["corrected_ci"]) == 2
    assert calibration.benchmark == "B1" and calibration.fingerprint == "a" * 64
    assert calibration.disagreements == (
        Disagreement("fn", "benchmarks/B1.yaml:2", "pass", "fail", "judged fn"),
        Disagreement("fp", "benchmarks/B1.yaml:2", "fail", "pass", "judged fp"),
    )
    assert calibration_path(tmp_path, "B1", "a" * 64).exists()


def test_a_run_without_labels_reuses_the_stored_calibration_of_its_judge(tmp_path: Path) -> None:
    calibrate(labelled(), tmp_path)
    unlabelled = [r for r in labelled(min_tpr=0.5) if not r.calibration]
    (reused,) = calibrate(unlabelled, tmp_path)
    assert reused.source == "stored" and reused.stored_labels == 7
    assert reused.agreement.n_labels == 7 and reused.trusted is True
    assert reused.note.startswith("reused the stored calibration of this judge (")
    assert reused.note.endswith(f", {calibration_path(tmp_path, 'B1', 'a' * 64).name}, 7 labels)")
    assert reused.disagreements == ()  # none of this run's cases has a label


def test_a_calibration_of_another_judge_is_stale_not_reused(tmp_path: Path) -> None:
    calibrate(labelled(), tmp_path)
    unlabelled = [
        replace(r, judge=JudgeFacts(fingerprint=OTHER_JUDGE)) for r in labelled() if not r.calibration
    ]
    (stale,) = calibrate(unlabelled, tmp_path)
    assert (stale.note, stale.source, stale.agreement.n_labels, stale.stored_labels) == (
        STALE,
        "run",
        0,
        None,
    )


def test_no_folder_stores_and_reads_nothing(tmp_path: Path) -> None:
    calibrate(labelled(), tmp_path)
    (alone,) = calibrate(labelled(), None)
    assert (alone.stored_labels, alone.note, alone.source) == (None, "", "run")
    assert calibrate([r for r in labelled() if not r.calibration], None) == []


def test_labels_judged_in_part_say_how_many_are_stored(tmp_path: Path) -> None:
    calibrate(labelled(), tmp_path)
    some = [r for r in labelled() if r.case in {"tp1", "fn", "u1"}]
    (partial,) = calibrate(some, tmp_path)
    assert partial.stored_labels == 7
    assert partial.note == "stored calibration of this judge: 7 labels, 2 of them judged in this run"
    assert partial.agreement.n_labels == 2  # this run's figures are this run's labels


def test_an_unwritable_folder_is_said(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    (calibration,) = calibrate(labelled(), blocked)
    assert calibration.stored_labels is None
    assert calibration.note.startswith(f"cannot write {calibration_path(blocked, 'B1', 'a' * 64)}: ")


def test_only_wanted_benchmarks_get_a_calibration() -> None:
    plain = [record("u1", "pass"), record("u2", "fail")]
    assert calibrate(plain, None) == []
    (minimum,) = calibrate([replace(r, min_labels=1) for r in plain], None)
    assert (minimum.agreement.n_labels, minimum.trusted) == (0, False)
    assert minimum.detail == "judge untrusted: 0 labels < 1"
    (corrected,) = calibrate([record(c, r, gate="corrected_lower_bound") for c, r in [("u", "pass")]], None)
    assert corrected.gate_rule == "corrected_lower_bound" and corrected.trusted is None


def test_an_errored_or_unjudged_label_is_not_a_pair() -> None:
    records = labelled()
    records += [record("err", "error", "pass", True, calibration=True)]
    records += [record("nojudge", "fail", "pass", None, calibration=True)]
    (calibration,) = calibrate(records, None)
    assert calibration.agreement.n_labels == 7


def test_benchmarks_are_calibrated_each_in_run_order() -> None:
    records = labelled("B2") + labelled("B1")
    assert [c.benchmark for c in calibrate(records, None)] == ["B2", "B1"]


def test_gated_records_leave_calibration_items_out() -> None:
    records = [*labelled(), record("c", "pass", "pass", True, code="ONLY-CAL", calibration=True)]
    kept = gated_records(records)
    assert [r.case for r in kept] == ["u1", "u2", "u3", ""]
    only = kept[-1]
    assert (only.benchmark, only.result, only.calibration, only.case_label) == (
        "ONLY-CAL",
        "skip",
        False,
        None,
    )
    (gate,) = [g for g in benchmark_gates(kept) if g.code == "ONLY-CAL"]
    assert gate.cases == 0


def gate(rule: str = "point", threshold: float | None = 0.5, **fields: object) -> BenchmarkGate:
    values: dict[str, object] = dict(
        code="B1",
        label="",
        cases=3,
        passed=2,
        failed=1,
        errors=0,
        skipped=0,
        review=0,
        threshold=threshold,
        criticality="threshold_gate",
        weight=1.0,
        parent_rubric=None,
        gate_rule=rule,
    )
    values.update(fields)
    return BenchmarkGate(**values)  # type: ignore[arg-type]


def calibrated(**fields: object) -> BenchmarkCalibration:
    (calibration,) = calibrate(labelled(), None)
    return replace(calibration, **fields)  # type: ignore[arg-type]


THETA = calibrated().corrected.theta or 0.0
LOW = calibrated().corrected.low or 0.0

GATES = {
    "an untrusted judge fails a passing gate": (
        gate(),
        calibrated(trusted=False, note="stale", detail="judge untrusted: TPR 0.75 < 0.90"),
        "untrusted",
        "stale; judge untrusted: TPR 0.75 < 0.90",
    ),
    "a trusted judge leaves a point gate alone": (gate(), calibrated(trusted=True), "pass", ""),
    "a corrected gate compares the corrected rate": (
        gate("corrected", THETA),
        calibrated(),
        "pass",
        f"corrected pass rate {THETA:.3f}",
    ),
    "a corrected gate fails below its threshold": (
        gate("corrected", THETA + 0.01),
        calibrated(),
        "fail",
        f"corrected pass rate {THETA:.3f} below {THETA + 0.01:g}",
    ),
    "a corrected lower bound gate compares the bound": (
        gate("corrected_lower_bound", LOW),
        calibrated(),
        "pass",
        f"corrected pass rate {THETA:.3f}, 95% lower bound {LOW:.3f}",
    ),
    "a corrected lower bound gate fails above the bound": (
        gate("corrected_lower_bound", LOW + 0.01),
        calibrated(),
        "fail",
        f"corrected pass rate {THETA:.3f}, 95% lower bound {LOW:.3f} below {LOW + 0.01:g}",
    ),
    "an unknown lower bound fails": (
        gate("corrected_lower_bound", 0.1),
        calibrated(corrected=replace(calibrated().corrected, low=None)),
        "fail",
        f"corrected pass rate {THETA:.3f}, 95% lower bound unknown",
    ),
    "a corrected hard gate fails on a failing case": (
        gate("corrected", 0.1, criticality="hard_gate"),
        calibrated(),
        "fail",
        f"corrected pass rate {THETA:.3f} below 0.1",
    ),
    "a corrected gate without a calibration fails": (
        gate("corrected"),
        None,
        "fail",
        "gate: corrected needs a calibration of this judge",
    ),
    "a corrected gate with a calibration of no labels fails": (
        gate("corrected_lower_bound"),
        calibrated(
            agreement=calibrate([replace(r, min_labels=1) for r in labelled() if not r.calibration], None)[
                0
            ].agreement
        ),
        "fail",
        "gate: corrected_lower_bound needs a calibration of this judge",
    ),
    "a judge no better than chance fails a corrected gate": (
        gate("corrected"),
        calibrated(corrected=replace(calibrated().corrected, chance=True)),
        "fail",
        "judge no better than chance (TPR + TNR <= 1)",
    ),
    "nothing to correct leaves the gate": (
        gate("corrected"),
        calibrated(corrected=replace(calibrated().corrected, theta=None)),
        "pass",
        "",
    ),
    "a corrected gate without threshold is not scored": (
        gate("corrected", None),
        None,
        "not scored",
        "",
    ),
}


@pytest.mark.parametrize(("before", "calibration", "status", "detail"), GATES.values(), ids=GATES.keys())
def test_calibration_decides_the_gate(
    before: BenchmarkGate, calibration: BenchmarkCalibration | None, status: str, detail: str
) -> None:
    other = replace(before, code="B2")
    after, untouched = apply_calibration([before, other], [calibration] if calibration else [])
    assert (after.status, after.detail) == (status, detail)
    if calibration is None or calibration.benchmark != "B2":
        assert untouched == other or other.gate_rule != "point"


def table_of(**fields: object) -> list[str]:
    return calibration_table([calibrated(**fields)])


def test_the_calibration_table() -> None:
    c = calibrated(trusted=False, detail="judge untrusted: TPR 0.75 < 0.90 (3/4), 7 labels", note="a note")
    a, r = c.agreement, c.corrected
    assert (r.low, r.high) != (None, None)
    corrected = f"{r.theta:.3f} [{r.low:.2f}, {r.high:.2f}]"
    row = [
        "B1",
        "7",
        f"0.75 [{a.tpr_ci[0]:.2f}, {a.tpr_ci[1]:.2f}]",  # type: ignore[index]
        f"0.67 [{a.tnr_ci[0]:.2f}, {a.tnr_ci[1]:.2f}]",
        f"{a.balanced_accuracy:.2f}",  # type: ignore[index]
        f"{a.kappa:.2f}",
        corrected,
        "no",
    ]
    header = [
        "benchmark",
        "labels",
        "TPR [CI]",
        "TNR [CI]",
        "bal. acc.",
        "kappa",
        "corrected [CI]",
        "trusted",
    ]
    widths = [max(len(h), len(v)) for h, v in zip(header, row, strict=True)]
    assert calibration_table([c]) == [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
        "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip(),
        "B1: a note",
        "B1: judge untrusted: TPR 0.75 < 0.90 (3/4), 7 labels",
    ]


@pytest.mark.parametrize(
    ("fields", "corrected", "trusted", "notes"),
    [
        ({"trusted": True, "detail": "judge trusted: ..."}, None, "yes", []),
        ({"trusted": None}, None, "-", []),
        ({"corrected": "theta=None"}, "-", "-", []),
        ({"corrected": "low=None"}, "{theta:.3f}", "-", []),
        (
            {"corrected": "chance"},
            "chance",
            "-",
            ["B1: judge no better than chance (TPR + TNR <= 1): no corrected pass rate"],
        ),
    ],
    ids=["trusted", "no minimum", "nothing to correct", "no interval", "chance"],
)
def test_table_cells(
    fields: dict[str, object], corrected: str | None, trusted: str, notes: list[str]
) -> None:
    base = calibrated()
    fields = dict(fields)  # the parameter itself is shared by every run of the test
    how = fields.pop("corrected", None)
    if how == "theta=None":
        fields["corrected"] = replace(base.corrected, theta=None)
    elif how == "low=None":
        fields["corrected"] = replace(base.corrected, low=None)
    elif how == "chance":
        fields["corrected"] = replace(base.corrected, chance=True)
    lines = table_of(**fields)
    cells = lines[2].split()
    assert cells[-1] == trusted
    if corrected is not None:
        theta = base.corrected.theta
        assert cells[-2] == corrected.format(theta=theta)
    assert lines[3:] == notes


def test_a_chance_judge_without_labels_shows_no_rate() -> None:
    (empty,) = calibrate([record("u", "pass", min_labels=3)], None)
    assert empty.corrected.theta is None
    assert (
        table_of(agreement=empty.agreement, corrected=replace(empty.corrected, chance=True))[2].split()[-2]
        == "-"
    )


def test_the_disagreements_and_the_summary() -> None:
    calibration = calibrated()
    lines = [
        "B1::fn at benchmarks/B1.yaml:2: human pass, judge fail: judged fn",
        "B1::fp at benchmarks/B1.yaml:2: human fail, judge pass: judged fp",
    ]
    assert disagreement_lines([calibration]) == lines
    assert calibration_summary([calibration]) == [
        "",
        *calibration_table([calibration]),
        "judge and human disagree (2):",
        *(f"  {line}" for line in lines),
    ]
    agreeing = replace(calibration, disagreements=())
    assert calibration_summary([agreeing]) == ["", *calibration_table([agreeing])]
    assert calibration_summary([]) == []


def test_the_results_file_object() -> None:
    c = calibrated(note="a note", detail="a detail", trusted=True, stored_labels=9)
    data = c.to_dict()
    assert data == {
        **c.agreement.to_dict(),
        "corrected_pass_rate": c.corrected.theta,
        "corrected_ci": [c.corrected.low, c.corrected.high],
        "chance": False,
        "trusted": True,
        "detail": "a note; a detail",
        "source": "run",
        "stored_labels": 9,
    }
    assert calibrated(corrected=replace(c.corrected, high=None)).to_dict()["corrected_ci"] is None
    assert calibrated(corrected=replace(c.corrected, low=None)).to_dict()["corrected_ci"] is None
    assert calibrated(detail="only").to_dict()["detail"] == "only"


def test_a_benchmark_without_labels_shows_dashes() -> None:
    (empty,) = calibrate([record("u", "pass", min_labels=3, judge=None)], None)
    assert empty.fingerprint == ""  # no judge decided it
    assert calibration_table([empty])[2].split() == ["B1", "0", "-", "-", "-", "-", "-", "no"]


def test_the_bootstrap_seed_is_the_runs() -> None:
    (default,) = calibrate(labelled(), None)
    (seeded,) = calibrate(labelled(), None, seed=7)
    assert (default.corrected.seed, seeded.corrected.seed) == (0, 7)
    assert default.detail == "" and default.trusted is None  # no minimum set


def test_a_calibration_item_and_a_release_case_may_share_an_id(tmp_path: Path) -> None:
    records = [
        record("same", "pass", "pass", True, calibration=True),
        record("same", "pass", "fail", False),  # a labelled release case of the same id
        record("other", "pass"),
    ]
    (calibration,) = calibrate(records, tmp_path)
    assert calibration.stored_labels == 2 and calibration.agreement.n_labels == 2


def test_a_benchmark_of_calibration_items_only_is_listed_once() -> None:
    records = [record(c, "pass", "pass", True, code="ONLY-CAL", calibration=True) for c in ("a", "b")]
    assert [(r.benchmark, r.case) for r in gated_records(records)] == [("ONLY-CAL", "")]
