"""Judge calibration against human labels: agreement, trust, corrected pass rates, stored calibrations.

The positive class is "pass". Pairs are (human_pass, judge_pass). numpy and statsmodels are
imported inside the functions that compute, to keep the plugin's start-up light.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_llmjudge.gating.statistics import wilson_interval
from pytest_llmjudge.suite.safe_write import locked, write_text

CALIBRATION_FORMAT = 1
# TPR and TNR are ratios of counts: a sum that is 1 up to rounding is still "no better than chance",
# and must not become a near-zero denominator.
_CHANCE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Confusion:
    """Judge against human, pass positive.

    tp: both pass; fn: judge fail, human pass; tn: both fail; fp: judge pass, human fail.
    """

    tp: int
    fn: int
    tn: int
    fp: int


def confusion(pairs: Iterable[tuple[bool, bool]]) -> Confusion:
    """Count (human_pass, judge_pass) pairs into a confusion matrix."""
    tp = fn = tn = fp = 0
    for human, judge in pairs:
        if human and judge:
            tp += 1
        elif human:
            fn += 1
        elif judge:
            fp += 1
        else:
            tn += 1
    return Confusion(tp=tp, fn=fn, tn=tn, fp=fp)


@dataclass(frozen=True)
class Agreement:
    """How well the judge matches the human labels; figures are None where undefined."""

    tp: int
    fn: int
    tn: int
    fp: int
    tpr: float | None
    tnr: float | None
    tpr_ci: tuple[float, float] | None
    tnr_ci: tuple[float, float] | None
    balanced_accuracy: float | None
    kappa: float | None
    n_labels: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values (tuples as lists)."""
        return {
            "tp": self.tp,
            "fn": self.fn,
            "tn": self.tn,
            "fp": self.fp,
            "tpr": self.tpr,
            "tnr": self.tnr,
            "tpr_ci": None if self.tpr_ci is None else list(self.tpr_ci),
            "tnr_ci": None if self.tnr_ci is None else list(self.tnr_ci),
            "balanced_accuracy": self.balanced_accuracy,
            "kappa": self.kappa,
            "n_labels": self.n_labels,
        }


def _kappa(conf: Confusion) -> float | None:
    """Cohen's κ (statsmodels); None without labels or when chance agreement is 1 (pe == 1)."""
    if conf.tp + conf.fn + conf.tn + conf.fp == 0:
        return None
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa  # type: ignore[import-untyped]

    # Rows human, columns judge, pass first. pe == 1 divides zero by zero: nan, not an error.
    with np.errstate(all="ignore"):
        kappa = float(cohens_kappa(np.array([[conf.tp, conf.fn], [conf.fp, conf.tn]]), return_results=False))
    return kappa if np.isfinite(kappa) else None


def agreement(conf: Confusion) -> Agreement:
    """TPR, TNR (Wilson 95 % intervals), balanced accuracy and Cohen's κ of a confusion matrix."""
    positives = conf.tp + conf.fn
    negatives = conf.tn + conf.fp
    tpr = conf.tp / positives if positives else None
    tnr = conf.tn / negatives if negatives else None
    return Agreement(
        tp=conf.tp,
        fn=conf.fn,
        tn=conf.tn,
        fp=conf.fp,
        tpr=tpr,
        tnr=tnr,
        tpr_ci=wilson_interval(conf.tp, positives) if positives else None,
        tnr_ci=wilson_interval(conf.tn, negatives) if negatives else None,
        balanced_accuracy=(tpr + tnr) / 2 if tpr is not None and tnr is not None else None,
        kappa=_kappa(conf),
        n_labels=positives + negatives,
    )


def corrected_pass_rate(p: float, tpr: float, tnr: float) -> float | None:
    """Rogan–Gladen: (p + tnr − 1) / (tpr + tnr − 1) clipped to [0, 1]; None when tpr + tnr ≤ 1."""
    youden = tpr + tnr - 1.0
    if youden <= _CHANCE_TOLERANCE:
        return None
    return min(1.0, max(0.0, (p + tnr - 1.0) / youden))


@dataclass(frozen=True)
class CorrectedRate:
    """A judge-error-corrected pass rate with its bootstrap interval.

    ``chance`` is True when the labels do not show the judge beating chance (TPR + TNR ≤ 1, or a
    class without labels); then there is no figure. ``theta`` is None also without verdicts.
    """

    theta: float | None
    low: float | None
    high: float | None
    chance: bool
    seed: int
    resamples: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        return {
            "theta": self.theta,
            "low": self.low,
            "high": self.high,
            "chance": self.chance,
            "seed": self.seed,
            "resamples": self.resamples,
        }


def why_no_correction(agreement: Agreement) -> str:
    """Why a calibration gives no corrected pass rate (``CorrectedRate.chance``): a class without
    labels leaves TPR or TNR unknown, which is not the judge doing no better than chance."""
    if agreement.tpr is None and agreement.tnr is None:
        return "no labels: TPR and TNR unknown"
    if agreement.tpr is None:
        return "no case labelled pass: TPR unknown, label passing cases too"
    if agreement.tnr is None:
        return "no case labelled fail: TNR unknown, label failing cases too"
    return "judge no better than chance (TPR + TNR <= 1)"


def corrected_interval(
    labelled: Sequence[tuple[bool, bool]],
    unlabelled: Sequence[bool],
    *,
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> CorrectedRate:
    """Rogan–Gladen pass rate of judge verdicts, corrected by labelled (human, judge) pairs.

    The interval is a seeded percentile bootstrap (numpy ``default_rng(seed)``) that resamples
    both the labelled pairs and the unlabelled verdicts each round, so it carries the uncertainty
    of the calibration as well as of the run; rounds whose resampled TPR + TNR ≤ 1 (or that lose a
    class) have no figure and are skipped. Same inputs and seed give the same numbers.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    conf = confusion(labelled)
    agree = agreement(conf)
    if agree.tpr is None or agree.tnr is None or agree.tpr + agree.tnr - 1.0 <= _CHANCE_TOLERANCE:
        return CorrectedRate(None, None, None, True, seed, resamples)
    if not unlabelled:
        return CorrectedRate(None, None, None, False, seed, resamples)
    n_verdicts = len(unlabelled)
    passes = sum(1 for verdict in unlabelled if verdict)
    theta = corrected_pass_rate(passes / n_verdicts, agree.tpr, agree.tnr)

    import numpy as np

    rng = np.random.default_rng(seed)
    cells = np.array([conf.tp, conf.fn, conf.tn, conf.fp], dtype=float)
    # Resampling n items with replacement only matters through the resampled counts, so they are
    # drawn directly (multinomial over the four cells, binomial over the verdicts): the same
    # distribution as drawing indices, without resamples × n of them in memory.
    counts = rng.multinomial(agree.n_labels, cells / cells.sum(), size=resamples)
    pass_counts = rng.binomial(n_verdicts, passes / n_verdicts, size=resamples)
    tp, fn, tn, fp = (counts[:, column].astype(float) for column in range(4))
    positives, negatives = tp + fn, tn + fp
    usable = (positives > 0) & (negatives > 0)
    with np.errstate(all="ignore"):
        youden = tp / positives + tn / negatives - 1.0
        usable &= youden > _CHANCE_TOLERANCE
        thetas = (pass_counts / n_verdicts + tn / negatives - 1.0) / youden
    thetas = np.clip(thetas[usable], 0.0, 1.0)
    if thetas.size == 0:
        return CorrectedRate(theta, None, None, False, seed, resamples)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(thetas, [tail, 1.0 - tail])
    return CorrectedRate(theta, float(low), float(high), False, seed, resamples)


def _figure(name: str, rate: float | None, hits: int, total: int, minimum: float | None) -> str:
    shown = "n/a" if rate is None else f"{rate:.2f}"
    bound = "" if minimum is None else f" < {minimum:.2f}"
    return f"{name} {shown}{bound} ({hits}/{total})"


def trust(
    agreement: Agreement,
    *,
    min_tpr: float | None = None,
    min_tnr: float | None = None,
    min_labels: int | None = None,
) -> tuple[bool, str]:
    """Whether the judge meets the minimums, and a line naming the figures.

    A class without labels counts as below its minimum when one is set.
    """
    positives, negatives = agreement.tp + agreement.fn, agreement.tn + agreement.fp
    tpr_low = min_tpr is not None and (agreement.tpr is None or agreement.tpr < min_tpr)
    tnr_low = min_tnr is not None and (agreement.tnr is None or agreement.tnr < min_tnr)
    labels_low = min_labels is not None and agreement.n_labels < min_labels
    labels = f"{agreement.n_labels} labels" + (f" < {min_labels}" if labels_low else "")
    if not (tpr_low or tnr_low or labels_low):
        tpr = _figure("TPR", agreement.tpr, agreement.tp, positives, None)
        tnr = _figure("TNR", agreement.tnr, agreement.tn, negatives, None)
        return True, f"judge trusted: {tpr}, {tnr}, {labels}"
    parts = []
    if tpr_low:
        parts.append(_figure("TPR", agreement.tpr, agreement.tp, positives, min_tpr))
    if tnr_low:
        parts.append(_figure("TNR", agreement.tnr, agreement.tn, negatives, min_tnr))
    parts.append(labels)
    return False, "judge untrusted: " + ", ".join(parts)


@dataclass(frozen=True)
class StoredCalibration:
    """A calibration read back from disk; the agreement is recomputed from the stored pairs."""

    path: Path
    fingerprint: str
    benchmark: str
    created: str
    agreement: Agreement
    pairs: tuple[tuple[bool, bool], ...]
    cases: tuple[str, ...] = ()  # the case of each pair; empty in a file stored before cases were kept
    # the snapshots that answered its judge calls (the provider's resolved models); empty when not
    # known (a file stored before they were recorded, or a judge that names no snapshot)
    snapshots: tuple[str, ...] = ()


def _file_stem(benchmark: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", benchmark)
    # Two names that sanitise alike must not share a file.
    if safe != benchmark:
        safe += "~" + hashlib.sha256(benchmark.encode()).hexdigest()[:8]
    return safe


def calibration_path(folder: Path, benchmark: str, fingerprint: str) -> Path:
    """Where the calibration of ``benchmark`` for the judge ``fingerprint`` lives."""
    return folder / f"{_file_stem(benchmark)}-{fingerprint[:16]}.json"


def store_calibration(
    folder: Path,
    fingerprint: str,
    benchmark: str,
    agreement: Agreement,
    pairs: Iterable[tuple[bool, bool]],
    cases: Sequence[str] = (),
    snapshots: Iterable[str] = (),
) -> Path:
    """Write the calibration (with the raw (human, judge) pairs, if given the case of each, and
    the snapshots that answered its judge calls) whole or not at all, and return its path.
    Failures to write are ``OSError``."""
    pair_list = [[bool(human), bool(judge)] for human, judge in pairs]
    counts = Confusion(agreement.tp, agreement.fn, agreement.tn, agreement.fp)
    if confusion((human, judge) for human, judge in pair_list) != counts:
        raise ValueError("the agreement does not match the pairs")
    if cases and len(cases) != len(pair_list):
        raise ValueError("one case id per pair")
    document: dict[str, Any] = {
        "format": CALIBRATION_FORMAT,
        "fingerprint": fingerprint,
        "benchmark": benchmark,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "agreement": agreement.to_dict(),
        "pairs": pair_list,
    }
    if cases:
        document["cases"] = list(cases)
    if snapshot_list := sorted(set(snapshots)):
        document["snapshots"] = snapshot_list
    path = calibration_path(folder, benchmark, fingerprint)
    # Written aside and renamed, so a concurrent reader never sees half a file.
    write_text(path, json.dumps(document, indent=1) + "\n")
    return path


def merge_calibration(
    folder: Path,
    fingerprint: str,
    benchmark: str,
    labelled: Mapping[str, tuple[bool, bool]],
    snapshots: Sequence[str] = (),
) -> StoredCalibration:
    """Store this run's labelled pairs (case → (human, judge)) into the benchmark's calibration for
    this judge, merged by case: a case judged now replaces its stored pair, the stored pairs of
    cases not judged now (``-k``) stay. A stored file without case ids, or one whose pairs another
    snapshot answered than this run's ``snapshots``, is replaced. Runs merge one at a time (a lock
    beside the file); returns what is stored now. Failures are ``OSError``."""
    path = calibration_path(folder, benchmark, fingerprint)
    with locked(path):
        stored = load_calibration(folder, benchmark, fingerprint)
        if stored is not None and not same_snapshots(stored.snapshots, snapshots):
            stored = None  # another snapshot's verdicts: this run's pairs replace them
        # a file stored without case ids cannot be merged: this run's pairs replace it
        kept = zip(stored.cases, stored.pairs, strict=True) if stored is not None and stored.cases else ()
        merged = {case: pair for case, pair in kept if case not in labelled}
        merged.update(labelled)
        pairs = list(merged.values())
        agree = agreement(confusion(pairs))
        both = [*snapshots, *(stored.snapshots if stored is not None else ())]
        store_calibration(folder, fingerprint, benchmark, agree, pairs, list(merged), both)
        now = _read(path)
    if now is None:
        raise OSError(f"{path} does not read back as the calibration just written")
    return now


def same_snapshots(stored: Sequence[str], now: Sequence[str]) -> bool:
    """Whether a calibration whose judge calls ``stored`` snapshots answered vouches for verdicts
    ``now`` snapshots gave: the same ones, or either side not known."""
    return not stored or not now or set(stored) == set(now)


def _parse(
    path: Path,
) -> tuple[str, str, str, list[tuple[bool, bool]], tuple[str, ...], tuple[str, ...]] | None:
    """(fingerprint, benchmark, created, pairs, cases, snapshots) of a stored calibration, or None
    for anything unreadable, malformed or of another format."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != CALIBRATION_FORMAT:
        return None
    fingerprint, benchmark, created = data.get("fingerprint"), data.get("benchmark"), data.get("created")
    raw_pairs, stored = data.get("pairs"), data.get("agreement")
    if not (isinstance(fingerprint, str) and isinstance(benchmark, str) and isinstance(created, str)):
        return None
    if not isinstance(raw_pairs, list) or not isinstance(stored, dict):
        return None
    pairs: list[tuple[bool, bool]] = []
    for pair in raw_pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, bool) for x in pair)):
            return None
        pairs.append((pair[0], pair[1]))
    counts = confusion(pairs)
    # Counts that disagree with the pairs mean an edited or damaged file.
    if any(stored.get(key) != getattr(counts, key) for key in ("tp", "fn", "tn", "fp")):
        return None
    cases = data.get("cases", [])
    if not (isinstance(cases, list) and all(isinstance(c, str) for c in cases)):
        return None
    if cases and (len(cases) != len(pairs) or len(set(cases)) != len(cases)):
        return None
    snapshots = data.get("snapshots", [])
    if not (isinstance(snapshots, list) and all(isinstance(s, str) and s for s in snapshots)):
        return None
    return fingerprint, benchmark, created, pairs, tuple(cases), tuple(snapshots)


def _read(path: Path) -> StoredCalibration | None:
    """A stored calibration with its agreement recomputed, or None (see ``_parse``)."""
    parsed = _parse(path)
    if parsed is None:
        return None
    fingerprint, benchmark, created, pairs, cases, snapshots = parsed
    agree = agreement(confusion(pairs))
    return StoredCalibration(path, fingerprint, benchmark, created, agree, tuple(pairs), cases, snapshots)


def load_calibration(folder: Path, benchmark: str, fingerprint: str) -> StoredCalibration | None:
    """The stored calibration of ``benchmark`` for exactly this judge, or None."""
    stored = _read(calibration_path(folder, benchmark, fingerprint))
    if stored is None or stored.benchmark != benchmark or stored.fingerprint != fingerprint:
        return None
    return stored


def stale_calibration(folder: Path, benchmark: str, fingerprint: str) -> bool:
    """True when ``benchmark`` has no calibration for this judge but has one for another judge."""
    if load_calibration(folder, benchmark, fingerprint) is not None:
        return False
    try:
        candidates = sorted(folder.glob("*.json"))
    except OSError:
        return False
    for path in candidates:
        # only who it is for: computing κ would import statsmodels (0.8 s) in every run
        parsed = _parse(path)
        if parsed is not None and parsed[1] == benchmark and parsed[0] != fingerprint:
            return True
    return False
