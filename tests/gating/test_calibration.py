"""Judge calibration, each figure checked against an independent computation on fixed data."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest

from pytest_llmjudge.gating.calibration import (
    Agreement,
    Confusion,
    agreement,
    confusion,
    corrected_interval,
    corrected_pass_rate,
    load_calibration,
    stale_calibration,
    store_calibration,
    trust,
)

FINGERPRINT = "3f9a0c1b7e6d5a4f2b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c"
OTHER_FINGERPRINT = "c0ffee" + FINGERPRINT[6:]


def labelled_pairs(tp: int, fn: int, tn: int, fp: int) -> list[tuple[bool, bool]]:
    """(human_pass, judge_pass) pairs with the given confusion counts."""
    return [(True, True)] * tp + [(True, False)] * fn + [(False, False)] * tn + [(False, True)] * fp


# The acceptance matrix: human pass 45 judge pass / 5 judge fail, human fail 10 judge pass / 40 judge fail.
MATRIX = labelled_pairs(tp=45, fn=5, tn=40, fp=10)


def wilson_by_formula(successes: int, n: int) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.975)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def kappa_by_hand(tp: int, fn: int, tn: int, fp: int) -> float:
    """Cohen's κ = (po − pe) / (1 − pe) from the 2×2 table."""
    n = tp + fn + tn + fp
    po = (tp + tn) / n
    human_pass, judge_pass = (tp + fn) / n, (tp + fp) / n
    pe = human_pass * judge_pass + (1 - human_pass) * (1 - judge_pass)
    return (po - pe) / (1 - pe)


def rogan_gladen(p: float, tpr: float, tnr: float) -> float:
    return min(1.0, max(0.0, (p + tnr - 1) / (tpr + tnr - 1)))


def test_confusion_counts_human_then_judge() -> None:
    pairs = [(True, True), (True, False), (False, False), (False, True), (True, True)]
    assert confusion(pairs) == Confusion(tp=2, fn=1, tn=1, fp=1)
    assert confusion(MATRIX) == Confusion(tp=45, fn=5, tn=40, fp=10)
    assert confusion([]) == Confusion(0, 0, 0, 0)


def test_acceptance_matrix_agreement() -> None:
    agree = agreement(confusion(MATRIX))
    assert agree.tpr == pytest.approx(0.9)
    assert agree.tnr == pytest.approx(0.8)
    assert agree.balanced_accuracy == pytest.approx(0.85)
    assert agree.n_labels == 100
    # po = 0.85, pe = 0.55·0.5 + 0.45·0.5 = 0.5
    assert agree.kappa == pytest.approx(0.7, abs=1e-12)
    assert agree.kappa == pytest.approx(kappa_by_hand(45, 5, 40, 10), abs=1e-12)
    assert agree.tpr_ci == pytest.approx(wilson_by_formula(45, 50), abs=1e-12)
    assert agree.tnr_ci == pytest.approx(wilson_by_formula(40, 50), abs=1e-12)


def test_agreement_to_dict_has_exactly_the_figures() -> None:
    data = agreement(confusion(MATRIX)).to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert set(data) == {
        "tp",
        "fn",
        "tn",
        "fp",
        "tpr",
        "tnr",
        "tpr_ci",
        "tnr_ci",
        "balanced_accuracy",
        "kappa",
        "n_labels",
    }
    assert isinstance(data["tpr_ci"], list)


def test_a_judge_worse_than_chance_has_negative_kappa() -> None:
    agree = agreement(Confusion(tp=3, fn=7, tn=5, fp=5))
    assert agree.tpr == pytest.approx(0.3)
    assert agree.tnr == pytest.approx(0.5)
    assert agree.kappa == pytest.approx(kappa_by_hand(3, 7, 5, 5), abs=1e-12)
    assert agree.kappa is not None and agree.kappa < 0
    assert corrected_pass_rate(0.5, 0.3, 0.5) is None


def test_one_class_only() -> None:
    agree = agreement(Confusion(tp=8, fn=2, tn=0, fp=0))
    assert agree.tpr == pytest.approx(0.8)
    assert (agree.tnr, agree.tnr_ci, agree.balanced_accuracy) == (None, None, None)
    assert agree.tpr_ci == pytest.approx(wilson_by_formula(8, 10), abs=1e-12)
    # po = 0.8, pe = 1·0.8 + 0·0.2 = 0.8: agreement no better than the judge's pass rate explains.
    assert agree.kappa == pytest.approx(kappa_by_hand(8, 2, 0, 0), abs=1e-12)
    assert agree.kappa == pytest.approx(0.0, abs=1e-12)


def test_kappa_undefined_when_chance_agreement_is_certain() -> None:
    # Human and judge both say pass every time: pe == 1.
    agree = agreement(Confusion(tp=10, fn=0, tn=0, fp=0))
    assert agree.kappa is None
    assert agree.tpr == 1.0


def test_zero_labels() -> None:
    agree = agreement(Confusion(0, 0, 0, 0))
    assert agree == Agreement(0, 0, 0, 0, None, None, None, None, None, None, 0)
    assert json.loads(json.dumps(agree.to_dict()))["kappa"] is None


# -- Rogan–Gladen ----------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 0.1, 0.2, 0.35, 0.55, 0.6, 0.9, 0.95, 1.0])
def test_corrected_pass_rate_is_rogan_gladen(p: float) -> None:
    assert corrected_pass_rate(p, 0.9, 0.8) == pytest.approx(rogan_gladen(p, 0.9, 0.8), abs=1e-12)


def test_corrected_pass_rate_by_hand() -> None:
    assert corrected_pass_rate(0.6, 0.9, 0.8) == pytest.approx(0.4 / 0.7)
    assert corrected_pass_rate(0.1, 0.9, 0.8) == 0.0  # (0.1 − 0.2) / 0.7 < 0
    assert corrected_pass_rate(0.95, 0.9, 0.8) == 1.0  # 0.75 / 0.7 > 1


@pytest.mark.parametrize(("tpr", "tnr"), [(0.5, 0.5), (0.7, 0.3), (0.6, 0.4), (0.3, 0.5), (0.0, 0.0)])
def test_no_correction_for_a_judge_no_better_than_chance(tpr: float, tnr: float) -> None:
    assert corrected_pass_rate(0.5, tpr, tnr) is None


def verdicts(passes: int, fails: int) -> list[bool]:
    return [True] * passes + [False] * fails


def test_corrected_interval_point_is_the_formula() -> None:
    unlabelled = verdicts(120, 80)
    result = corrected_interval(MATRIX, unlabelled, seed=7, resamples=500)
    assert result.theta == pytest.approx(rogan_gladen(0.6, 0.9, 0.8), abs=1e-12)
    assert not result.chance
    assert result.low is not None and result.high is not None and result.theta is not None
    assert result.low < result.theta < result.high
    assert (result.seed, result.resamples) == (7, 500)


def test_corrected_interval_is_reproducible() -> None:
    unlabelled = verdicts(120, 80)
    first = corrected_interval(MATRIX, unlabelled, seed=3)
    assert corrected_interval(MATRIX, unlabelled, seed=3) == first
    assert corrected_interval(MATRIX, unlabelled, seed=4) != first


def bootstrap_by_index(
    labelled: list[tuple[bool, bool]], unlabelled: list[bool], rounds: int, seed: int
) -> tuple[float, float]:
    """A plain percentile bootstrap drawing indices with the standard library."""
    rng = random.Random(seed)
    thetas = []
    for _ in range(rounds):
        pairs = [labelled[rng.randrange(len(labelled))] for _ in labelled]
        sample = [unlabelled[rng.randrange(len(unlabelled))] for _ in unlabelled]
        tp = sum(1 for h, j in pairs if h and j)
        positives = sum(1 for h, _ in pairs if h)
        tn = sum(1 for h, j in pairs if not h and not j)
        negatives = len(pairs) - positives
        if positives == 0 or negatives == 0 or tp / positives + tn / negatives <= 1:
            continue
        thetas.append(rogan_gladen(sum(sample) / len(sample), tp / positives, tn / negatives))
    thetas.sort()

    def quantile(q: float) -> float:
        position = q * (len(thetas) - 1)
        below = math.floor(position)
        above = min(below + 1, len(thetas) - 1)
        return thetas[below] + (thetas[above] - thetas[below]) * (position - below)

    return quantile(0.025), quantile(0.975)


def test_corrected_interval_agrees_with_an_index_bootstrap() -> None:
    unlabelled = verdicts(120, 80)
    result = corrected_interval(MATRIX, unlabelled, seed=11, resamples=4000)
    low, high = bootstrap_by_index(MATRIX, unlabelled, rounds=4000, seed=11)
    # Two different random streams: the same distribution, so close but not equal.
    assert result.low == pytest.approx(low, abs=0.015)
    assert result.high == pytest.approx(high, abs=0.015)


def test_corrected_interval_for_a_chance_judge() -> None:
    result = corrected_interval(labelled_pairs(tp=3, fn=7, tn=5, fp=5), verdicts(10, 10))
    assert result.chance
    assert (result.theta, result.low, result.high) == (None, None, None)


@pytest.mark.parametrize("labelled", [labelled_pairs(8, 2, 0, 0), labelled_pairs(0, 0, 9, 1), []])
def test_corrected_interval_needs_both_classes(labelled: list[tuple[bool, bool]]) -> None:
    result = corrected_interval(labelled, verdicts(10, 10))
    assert result.chance and result.theta is None


def test_corrected_interval_without_verdicts() -> None:
    result = corrected_interval(MATRIX, [])
    assert (result.theta, result.low, result.high, result.chance) == (None, None, None, False)


def test_corrected_interval_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        corrected_interval(MATRIX, [True], resamples=0)
    with pytest.raises(ValueError):
        corrected_interval(MATRIX, [True], confidence=1.5)


# -- Trust -----------------------------------------------------------------------------------------


def test_tpr_below_the_minimum_is_untrusted() -> None:
    agree = agreement(confusion(MATRIX))
    trusted, detail = trust(agree, min_tpr=0.95, min_tnr=None, min_labels=None)
    assert not trusted
    assert detail == "judge untrusted: TPR 0.90 < 0.95 (45/50), 100 labels"


def test_every_shortfall_is_named() -> None:
    agree = agreement(confusion(MATRIX))
    trusted, detail = trust(agree, min_tpr=0.95, min_tnr=0.85, min_labels=200)
    assert not trusted
    assert detail == "judge untrusted: TPR 0.90 < 0.95 (45/50), TNR 0.80 < 0.85 (40/50), 100 labels < 200"


def test_meeting_the_minimums_is_trusted() -> None:
    agree = agreement(confusion(MATRIX))
    trusted, detail = trust(agree, min_tpr=0.9, min_tnr=0.8, min_labels=100)
    assert trusted
    assert detail == "judge trusted: TPR 0.90 (45/50), TNR 0.80 (40/50), 100 labels"
    assert trust(agree, min_tpr=None, min_tnr=None, min_labels=None)[0]


def test_a_missing_class_is_below_a_set_minimum() -> None:
    agree = agreement(Confusion(tp=8, fn=2, tn=0, fp=0))
    trusted, detail = trust(agree, min_tpr=None, min_tnr=0.5, min_labels=None)
    assert not trusted
    assert detail == "judge untrusted: TNR n/a < 0.50 (0/0), 10 labels"
    assert trust(agree, min_tpr=0.8, min_tnr=None, min_labels=10)[0]


# -- Stored calibrations ---------------------------------------------------------------------------


def test_store_and_load(tmp_path: Path) -> None:
    agree = agreement(confusion(MATRIX))
    path = store_calibration(tmp_path / "calibrations", FINGERPRINT, "a-component", agree, MATRIX)
    assert path == tmp_path / "calibrations" / f"a-component-{FINGERPRINT[:16]}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == 1
    assert (data["fingerprint"], data["benchmark"]) == (FINGERPRINT, "a-component")
    assert data["created"].endswith("+00:00")
    assert data["agreement"] == agree.to_dict()
    assert [tuple(pair) for pair in data["pairs"]] == MATRIX

    stored = load_calibration(tmp_path / "calibrations", "a-component", FINGERPRINT)
    assert stored is not None
    assert stored.agreement == agree
    assert stored.pairs == tuple(MATRIX)
    assert stored.created == data["created"]
    # The raw pairs make the bootstrap recomputable.
    unlabelled = verdicts(120, 80)
    assert corrected_interval(list(stored.pairs), unlabelled) == corrected_interval(MATRIX, unlabelled)
    assert [p.name for p in (tmp_path / "calibrations").iterdir()] == [path.name]


def test_a_calibration_belongs_to_one_judge(tmp_path: Path) -> None:
    agree = agreement(confusion(MATRIX))
    store_calibration(tmp_path, FINGERPRINT, "a-component", agree, MATRIX)
    assert load_calibration(tmp_path, "a-component", OTHER_FINGERPRINT) is None
    assert stale_calibration(tmp_path, "a-component", OTHER_FINGERPRINT)
    assert not stale_calibration(tmp_path, "a-component", FINGERPRINT)
    assert not stale_calibration(tmp_path, "s-component", OTHER_FINGERPRINT)
    assert load_calibration(tmp_path, "s-component", FINGERPRINT) is None
    # Recalibrating the new judge clears the staleness.
    store_calibration(tmp_path, OTHER_FINGERPRINT, "a-component", agree, MATRIX)
    assert not stale_calibration(tmp_path, "a-component", OTHER_FINGERPRINT)


def test_missing_folder(tmp_path: Path) -> None:
    assert load_calibration(tmp_path / "absent", "a-component", FINGERPRINT) is None
    assert not stale_calibration(tmp_path / "absent", "a-component", FINGERPRINT)


def test_awkward_benchmark_names_stay_in_the_folder(tmp_path: Path) -> None:
    agree = agreement(confusion(MATRIX))
    first = store_calibration(tmp_path, FINGERPRINT, "suite/qa", agree, MATRIX)
    second = store_calibration(tmp_path, FINGERPRINT, "suite_qa", agree, MATRIX)
    assert first.parent == tmp_path and first != second
    stored = load_calibration(tmp_path, "suite/qa", FINGERPRINT)
    assert stored is not None and stored.benchmark == "suite/qa"


def test_the_agreement_must_match_the_pairs(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        store_calibration(tmp_path, FINGERPRINT, "qa", agreement(confusion(MATRIX)), MATRIX[:-1])


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: "{not json",
        lambda data: "\udcff",
        lambda data: json.dumps([1, 2, 3]),
        lambda data: json.dumps({**data, "format": 2}),
        lambda data: json.dumps({**data, "fingerprint": 42}),
        lambda data: json.dumps({**data, "pairs": [[True, 1]]}),
        lambda data: json.dumps({**data, "pairs": "many"}),
        lambda data: json.dumps({**data, "agreement": {**data["agreement"], "tp": 44}}),
        lambda data: json.dumps({key: value for key, value in data.items() if key != "created"}),
        lambda data: "[" * 100_000,
    ],
)
def test_damaged_files_count_as_absent(tmp_path: Path, damage: Callable[[dict[str, Any]], str]) -> None:
    agree = agreement(confusion(MATRIX))
    path = store_calibration(tmp_path, FINGERPRINT, "a-component", agree, MATRIX)
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_bytes(damage(data).encode("utf-8", errors="surrogateescape"))
    assert load_calibration(tmp_path, "a-component", FINGERPRINT) is None
    assert not stale_calibration(tmp_path, "a-component", OTHER_FINGERPRINT)


def test_an_unreadable_path_counts_as_absent(tmp_path: Path) -> None:
    (tmp_path / f"a-component-{FINGERPRINT[:16]}.json").mkdir()
    assert load_calibration(tmp_path, "a-component", FINGERPRINT) is None
    assert not stale_calibration(tmp_path, "a-component", OTHER_FINGERPRINT)
