"""Calibration of one run: from its case records (some carrying human labels) to per-benchmark
agreement, corrected pass rate, trust verdict and the stored-calibration decisions. No pytest here.

A record counts as a labelled pair when it has a human label and a judge verdict; the
unlabelled verdicts of the benchmark's gated cases give the observed pass rate that the
calibration corrects. A run without labelled verdicts for a benchmark reuses the calibration
stored for the same judge fingerprint, and says when the stored one is for another judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .calibration import (
    Agreement,
    CorrectedRate,
    agreement,
    calibration_path,
    confusion,
    corrected_interval,
    load_calibration,
    merge_calibration,
    same_snapshots,
    stale_calibration,
    trust,
    why_no_correction,
)
from .gates import CORRECTED_RULES, EPSILON, BenchmarkGate
from .records import CaseRecord

STALE = "calibration is for another judge (model, settings or compiled instructions changed)"
STALE_SNAPSHOT = "calibration is for another judge snapshot"


def snapshots_of(records: Iterable[CaseRecord]) -> tuple[str, ...]:
    """The snapshots that answered ``records``' judge calls (the provider's resolved models)."""
    return tuple(sorted({s.answered_model for r in records for s in r.samples if s.answered_model}))


def stale_snapshot(stored: Sequence[str], now: Sequence[str]) -> str:
    """Why a stored calibration of one snapshot does not vouch for a run another one judged."""
    return (
        f"{STALE_SNAPSHOT} (stored for {', '.join(stored)}, this run judged by {', '.join(now)}): "
        f"judge labelled cases with this snapshot, or pin the judge to the stored one"
    )


def fingerprint_of(record: CaseRecord) -> str:
    """The judge fingerprint of a judged record (model label, settings, compiled-instructions
    digest), or "" when no judge decided it."""
    found = record.judge.fingerprint if record.judge else None
    return found.fingerprint if found else ""


def gate_rule_of(record: CaseRecord) -> str:
    return (record.judge.gate if record.judge else "") or "point"


@dataclass(frozen=True)
class Disagreement:
    case: str
    location: str
    human: str
    judge: str
    reason: str


@dataclass(frozen=True)
class BenchmarkCalibration:
    """A benchmark's calibration in this run; ``source`` is ``run`` or ``stored``."""

    benchmark: str
    fingerprint: str
    agreement: Agreement
    corrected: CorrectedRate
    trusted: bool | None  # None: no minimum set
    detail: str
    source: str
    gate_rule: str = "point"
    note: str = ""
    disagreements: tuple[Disagreement, ...] = ()
    stored_labels: int | None = None  # labels the stored calibration of this judge rests on now

    def to_dict(self) -> dict[str, Any]:
        """The results file's ``calibration`` object."""
        figures = self.agreement.to_dict()
        return {
            **figures,
            "corrected_pass_rate": self.corrected.theta,
            "corrected_ci": None
            if self.corrected.low is None or self.corrected.high is None
            else [self.corrected.low, self.corrected.high],
            "chance": self.corrected.chance,
            "trusted": self.trusted,
            "detail": "; ".join(part for part in (self.note, self.detail) if part),
            "source": self.source,
            "stored_labels": self.stored_labels,
        }


def _minimums(record: CaseRecord) -> dict[str, Any]:
    return {"min_tpr": record.min_tpr, "min_tnr": record.min_tnr, "min_labels": record.min_labels}


def _verdict(passed: bool | None) -> str:
    return "pass" if passed else "fail"


def calibrate(
    records: Sequence[CaseRecord], folder: Path | None, *, seed: int = 0
) -> list[BenchmarkCalibration]:
    """Calibrations of the benchmarks that have labels, a stored calibration or trust minimums.

    Labelled pairs judged in this run are stored in ``folder`` under the judge fingerprint
    (``folder`` None: neither stored nor looked up).
    """
    grouped: dict[str, list[CaseRecord]] = {}
    for record in records:
        grouped.setdefault(record.benchmark, []).append(record)
    return [c for items in grouped.values() if (c := _benchmark(items, folder, seed)) is not None]


def _benchmark(items: list[CaseRecord], folder: Path | None, seed: int) -> BenchmarkCalibration | None:
    code = items[0].benchmark
    minimums = _minimums(items[0])
    fingerprint = next((f for r in items if (f := fingerprint_of(r))), "")
    labelled = [r for r in items if r.case_label and r.judge_pass is not None and r.result != "error"]
    pairs = [(r.case_label == "pass", bool(r.judge_pass)) for r in labelled]
    unlabelled = [
        r.result == "pass"
        for r in items
        if not r.case_label and not r.calibration and r.result in {"pass", "fail"}
    ]
    source, note = "run", ""
    stored_labels: int | None = None
    if pairs:
        if folder is not None and fingerprint:
            stored_labels, note = _store(folder, fingerprint, code, labelled)
    elif folder is not None and fingerprint:
        pairs, source, stored_labels, note = _stored(folder, code, fingerprint, snapshots_of(items))
    wanted = (
        any(value is not None for value in minimums.values()) or gate_rule_of(items[0]) in CORRECTED_RULES
    )
    if not pairs and not note and not wanted:
        return None
    agree = agreement(confusion(pairs))
    trusted: bool | None = None
    detail = ""
    if any(value is not None for value in minimums.values()):
        trusted, detail = trust(agree, **minimums)
    corrected = corrected_interval(pairs, unlabelled, seed=seed)
    disagreements = tuple(
        Disagreement(r.case, r.location, r.case_label or "", _verdict(r.judge_pass), r.reason)
        for r in labelled
        if (r.case_label == "pass") != bool(r.judge_pass)
    )
    return BenchmarkCalibration(
        code,
        fingerprint,
        agree,
        corrected,
        trusted,
        detail,
        source,
        gate_rule_of(items[0]),
        note,
        disagreements,
        stored_labels,
    )


def _stored(
    folder: Path, code: str, fingerprint: str, snapshots: Sequence[str]
) -> tuple[list[tuple[bool, bool]], str, int | None, str]:
    """(pairs, source, labels, note) of the stored calibration of this judge, reused when the
    snapshots that answered this run's verdicts are those that answered its pairs."""
    stored = load_calibration(folder, code, fingerprint)
    if stored is None:
        return [], "run", None, STALE if stale_calibration(folder, code, fingerprint) else ""
    if not same_snapshots(stored.snapshots, snapshots):
        return [], "run", None, stale_snapshot(stored.snapshots, snapshots)
    labels = stored.agreement.n_labels
    note = (
        f"reused the stored calibration of this judge ({stored.created}, {stored.path.name}, {labels} labels)"
    )
    return list(stored.pairs), "stored", labels, note


def _label_key(record: CaseRecord) -> str:
    """A labelled case's key in the stored calibration: a calibration item and a release case may
    share an id."""
    return f"calibration::{record.case}" if record.calibration else record.case


def _store(folder: Path, fingerprint: str, code: str, labelled: list[CaseRecord]) -> tuple[int | None, str]:
    """Merge this run's labelled pairs into the stored calibration: (labels it rests on now, a note
    when that is not just this run's, or why it could not be written)."""
    pairs = {_label_key(r): (r.case_label == "pass", bool(r.judge_pass)) for r in labelled}
    try:
        stored = merge_calibration(folder, fingerprint, code, pairs, snapshots_of(labelled))
    except OSError as error:
        return None, f"cannot write {calibration_path(folder, code, fingerprint)}: {error}"
    total = stored.agreement.n_labels
    if total == len(pairs):
        return total, ""
    return total, f"stored calibration of this judge: {total} labels, {len(pairs)} of them judged in this run"


def gated_records(records: Iterable[CaseRecord]) -> list[CaseRecord]:
    """The records that count toward pass rates: calibration cases are judged and reported only.

    A benchmark of which only calibration cases ran keeps one record without a case id, so it
    is still listed (with 0 cases), as a benchmark without cases is.
    """
    kept: list[CaseRecord] = []
    listed: set[str] = set()
    for record in records:
        if not record.calibration:
            kept.append(record)
            listed.add(record.benchmark)
    for record in records:
        if record.benchmark not in listed:
            listed.add(record.benchmark)
            kept.append(replace(record, case="", result="skip", calibration=False, case_label=None))
    return kept


def apply_calibration(
    gates: Sequence[BenchmarkGate], calibrations: Sequence[BenchmarkCalibration]
) -> list[BenchmarkGate]:
    """Gates with the calibration's decisions: an untrusted judge fails its gate whatever the pass
    rate; ``gate: corrected`` compares the corrected pass rate with the threshold, and ``gate:
    corrected_lower_bound`` the lower end of its 95% interval."""
    by_code = {c.benchmark: c for c in calibrations}
    result = []
    for gate in gates:
        calibration = by_code.get(gate.code)
        if calibration is not None and calibration.trusted is False:
            detail = "; ".join(part for part in (calibration.note, calibration.detail) if part)
            gate = replace(gate, override="untrusted", detail=detail)
        elif gate.gate_rule in CORRECTED_RULES and gate.threshold is not None:
            gate = _corrected_gate(gate, calibration)
        result.append(gate)
    return result


def _corrected_gate(gate: BenchmarkGate, calibration: BenchmarkCalibration | None) -> BenchmarkGate:
    assert gate.threshold is not None
    if calibration is None or not calibration.agreement.n_labels:
        return replace(
            gate, override="fail", detail=f"gate: {gate.gate_rule} needs a calibration of this judge"
        )
    corrected = calibration.corrected
    if corrected.chance:
        return replace(gate, override="fail", detail=why_no_correction(calibration.agreement))
    if corrected.theta is None:
        return gate  # no unlabelled verdicts: nothing to correct
    measured = f"corrected pass rate {corrected.theta:.3f}"
    rate: float | None = corrected.theta
    if gate.gate_rule == "corrected_lower_bound":
        rate = corrected.low
        measured += ", 95% lower bound " + ("unknown" if rate is None else f"{rate:.3f}")
    status = "pass" if rate is not None and rate + EPSILON >= gate.threshold else "fail"
    if gate.criticality == "hard_gate" and gate.failed:
        status = "fail"
    below = f" below {gate.threshold:g}" if status == "fail" and rate is not None else ""
    return replace(gate, override=status, detail=measured + below)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _interval(value: tuple[float, float] | None) -> str:
    return "" if value is None else f" [{value[0]:.2f}, {value[1]:.2f}]"


def calibration_table(calibrations: Sequence[BenchmarkCalibration]) -> list[str]:
    """The terminal's calibration table, then the notes (stored, stale, untrusted) one a line."""
    header = (
        "benchmark",
        "labels",
        "TPR [CI]",
        "TNR [CI]",
        "bal. acc.",
        "kappa",
        "corrected [CI]",
        "trusted",
    )
    rows = [header]
    for c in calibrations:
        a, r = c.agreement, c.corrected
        if r.chance and a.n_labels:
            corrected = "chance"
        elif r.theta is None:
            corrected = "-"
        else:
            low_high = None if r.low is None or r.high is None else (r.low, r.high)
            corrected = f"{r.theta:.3f}{_interval(low_high)}"
        trusted = {None: "-", True: "yes", False: "no"}[c.trusted]
        rows.append(
            (
                c.benchmark,
                str(a.n_labels),
                _rate(a.tpr) + _interval(a.tpr_ci),
                _rate(a.tnr) + _interval(a.tnr_ci),
                _rate(a.balanced_accuracy),
                _rate(a.kappa),
                corrected,
                trusted,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for c in calibrations:
        if c.corrected.chance and c.agreement.n_labels:
            lines.append(f"{c.benchmark}: {why_no_correction(c.agreement)}: no corrected pass rate")
        for part in (c.note, c.detail if c.trusted is False else ""):
            if part:
                lines.append(f"{c.benchmark}: {part}")
    return lines


def disagreement_lines(calibrations: Sequence[BenchmarkCalibration]) -> list[str]:
    """One line per case where judge and human disagree, with the judge's reason."""
    return [
        f"{c.benchmark}::{d.case} at {d.location}: human {d.human}, judge {d.judge}: {d.reason}"
        for c in calibrations
        for d in c.disagreements
    ]


CALIBRATION_FOLDER = ".llmjudge/calibration"


def calibration_summary(calibrations: Sequence[BenchmarkCalibration]) -> list[str]:
    """The terminal's calibration section: the table, notes, then the disagreements."""
    if not calibrations:
        return []
    lines = ["", *calibration_table(calibrations)]
    disagreements = disagreement_lines(calibrations)
    if disagreements:
        lines += [f"judge and human disagree ({len(disagreements)}):", *(f"  {d}" for d in disagreements)]
    return lines
