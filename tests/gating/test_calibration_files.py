"""A stored calibration is used only when it is whole and is this judge's: damaged files, and a
judge whose fingerprint shares the file name of another's, count as no calibration."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.gating.calibration import (
    agreement,
    confusion,
    load_calibration,
    stale_calibration,
    store_calibration,
)

FINGERPRINT = "3f9a0c1b7e6d5a4f" + "2b8c9d0e1f2a3b4c" * 3
# the same first 16 characters, so the same file name: another judge all the same
NAMESAKE = FINGERPRINT[:16] + "0" * 48
PAIRS = [(True, True), (True, False), (False, False)]


def stored(folder: Path, pairs: list[tuple[bool, bool]] = PAIRS, cases: list[str] | None = None) -> Path:
    return store_calibration(folder, FINGERPRINT, "B1", agreement(confusion(pairs)), pairs, cases or [])


def test_a_judge_sharing_the_file_name_is_another_judge(tmp_path: Path) -> None:
    path = stored(tmp_path)
    assert load_calibration(tmp_path, "B1", NAMESAKE) is None
    assert stale_calibration(tmp_path, "B1", NAMESAKE)
    assert path.name.endswith(f"-{NAMESAKE[:16]}.json")


def test_a_file_of_another_benchmark_under_this_name_is_not_used(tmp_path: Path) -> None:
    path = stored(tmp_path)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "benchmark": "B2"}))
    assert load_calibration(tmp_path, "B1", FINGERPRINT) is None


DAMAGE: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "agreement is not an object": lambda data: {**data, "agreement": None},
    "a pair of one": lambda data: {**data, "pairs": [[True], *data["pairs"][1:]]},
    "a pair of numbers": lambda data: {**data, "pairs": [[1, 1], *data["pairs"][1:]]},
    "cases are not a list": lambda data: {**data, "cases": "abc"},
    "a case twice": lambda data: {**data, "cases": ["a", "a", "b"]},
    "a case short": lambda data: {**data, "cases": ["a", "b"]},
    "a case that is not a string": lambda data: {**data, "cases": ["a", "b", 3]},
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_damaged_files_count_as_absent(
    tmp_path: Path, damage: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    path = stored(tmp_path, cases=["a", "b", "c"])
    assert load_calibration(tmp_path, "B1", FINGERPRINT) is not None
    path.write_text(json.dumps(damage(json.loads(path.read_text()))), encoding="utf-8")
    assert load_calibration(tmp_path, "B1", FINGERPRINT) is None
    assert not stale_calibration(tmp_path, "B1", NAMESAKE)
