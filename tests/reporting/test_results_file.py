"""The results file: schema, loading with errors that name the file, its path, accessors."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pytest_llmjudge.reporting.results_file import (
    FORMAT,
    SCHEMA_PATH,
    ResultsFileError,
    case_results,
    default_results_path,
    disagrees,
    judge_models,
    load_results,
    validate,
)

from .results_factory import make_baseline, make_hostile_results, make_results


def write(tmp_path: Path, data: Any, name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["format"] == {"const": FORMAT, "description": "Version of this file format."}


@pytest.mark.parametrize(
    "results",
    [make_results(), make_results(200, baseline=make_baseline(200)), make_hostile_results()],
    ids=["plain", "compared", "hostile"],
)
def test_generated_results_validate_and_load(tmp_path: Path, results: dict[str, Any]) -> None:
    validate(results)
    assert load_results(write(tmp_path, results)) == results


def test_a_mistyped_key_names_the_file_the_place_and_the_key_meant(tmp_path: Path) -> None:
    results = make_results()
    gate = results["benchmarks"][1]["gate"]
    gate["pass_rte"] = gate.pop("pass_rate")
    path = write(tmp_path, results)
    with pytest.raises(ResultsFileError) as caught:
        load_results(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: $.benchmarks[1].gate: ")
    assert "'pass_rte' was unexpected" in message
    assert "did you mean 'pass_rte' → 'pass_rate'?" in message


def test_a_value_of_the_wrong_type_names_the_file_and_the_place(tmp_path: Path) -> None:
    results = make_results()
    results["totals"]["cases"] = "60"
    path = write(tmp_path, results)
    with pytest.raises(
        ResultsFileError, match=r"run\.json: \$\.totals\.cases: '60' is not of type 'integer'"
    ):
        load_results(path)


def test_a_wrong_enum_value_in_a_case_is_caught(tmp_path: Path) -> None:
    results = make_results()
    results["benchmarks"][0]["cases"][2]["result"] = "passed"
    with pytest.raises(
        ResultsFileError, match=r"\$\.benchmarks\[0\]\.cases\[2\]\.result: 'passed' is not one of"
    ):
        load_results(write(tmp_path, results))


def test_a_missing_key_is_caught() -> None:
    results = make_results()
    del results["benchmarks"][0]["calibration"]
    with pytest.raises(ResultsFileError, match=r"results: \$\.benchmarks\[0\]: 'calibration' is a required"):
        validate(results)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({**make_results(), "format": 3}, "results format 3 is not supported (this version reads format 2)"),
        ({"benchmarks": []}, "not a results file: no 'format' key"),
        ([1, 2], "not a results file: the top level is not a JSON object"),
    ],
    ids=["newer format", "no format", "not an object"],
)
def test_other_formats_and_other_files_are_refused(tmp_path: Path, data: Any, expected: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ResultsFileError) as caught:
        load_results(path)
    assert str(caught.value) == f"{path}: {expected}"


def test_a_format_1_file_is_read_as_format_2_with_no_produced_outputs(tmp_path: Path) -> None:
    older = make_results()
    older["format"] = 1
    for benchmark in older["benchmarks"]:
        for case in benchmark["cases"]:
            del case["produced"]
    loaded = load_results(write(tmp_path, older))
    assert loaded["format"] == FORMAT == 2
    assert {case["produced"] for b in loaded["benchmarks"] for case in b["cases"]} == {None}


def test_broken_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format": 1,\n  "started": }\n', encoding="utf-8")
    with pytest.raises(ResultsFileError, match=r"broken\.json:2:14: not valid JSON: Expecting value"):
        load_results(path)


def test_a_missing_file_is_a_results_file_error(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match=r"nothing\.json: cannot read results file"):
        load_results(tmp_path / "nothing.json")


def test_the_default_path_is_the_utc_start_and_the_digest(tmp_path: Path) -> None:
    started = datetime(2026, 11, 23, 11, 30, 0, tzinfo=timezone(timedelta(hours=1)))
    path = default_results_path(tmp_path, started, "9d0937837a7a41f0c2b5")
    assert path == tmp_path / ".llmjudge" / "runs" / "20261123T103000Z-9d0937837a7a.json"
    assert not path.parent.exists()
    naive = default_results_path(tmp_path, datetime(2026, 11, 23, 10, 30), "9d0937837a7a41f0c2b5")
    assert naive == path


def test_the_default_path_never_overwrites_a_run(tmp_path: Path) -> None:
    started = datetime(2026, 11, 23, 10, 30, tzinfo=UTC)
    names = []
    for _ in range(3):
        path = default_results_path(tmp_path, started, "abcdef0123456789")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
        names.append(path.name)
    assert names == [
        "20261123T103000Z-abcdef012345.json",
        "20261123T103000Z-abcdef012345-2.json",
        "20261123T103000Z-abcdef012345-3.json",
    ]


def test_accessors() -> None:
    results = make_results()
    assert judge_models(results) == ["openai:gpt-4o"]
    outcomes = case_results(results)
    assert len(outcomes) == results["totals"]["cases"]
    first = results["benchmarks"][0]["cases"][0]
    assert outcomes[("A-MED1", first["id"])] == first["result"]


@pytest.mark.parametrize(
    ("label", "result", "expected"),
    [
        ("pass", "fail", True),
        ("fail", "pass", True),
        ("pass", "pass", False),
        (None, "fail", False),
        ("fail", "error", False),
        ("pass", "skip", False),
    ],
)
def test_disagreement_needs_a_label_and_a_verdict(label: str | None, result: str, expected: bool) -> None:
    assert disagrees({"label": label, "result": result, "calibration": False}) is expected


@pytest.mark.parametrize(
    ("label", "result", "expected"),
    [("fail", "pass", False), ("fail", "fail", True), ("pass", "pass", False), ("pass", "error", False)],
)
def test_a_calibration_case_result_is_its_agreement(label: str, result: str, expected: bool) -> None:
    assert disagrees({"label": label, "result": result, "calibration": True}) is expected


DOCS = Path(__file__).resolve().parents[2] / "docs" / "results.md"


def test_the_documented_example_is_a_valid_results_file() -> None:
    example = re.search(r"## Example\n.*?```json\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert example
    validate(json.loads(example.group(1)), source="docs/results.md")


def test_every_key_of_the_schema_is_documented() -> None:
    names = re.findall(r"`([a-z_.]+)`", DOCS.read_text(encoding="utf-8"))
    documented = {part for name in names for part in name.split(".")}
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))

    def keys(node: Any) -> set[str]:
        found = set()
        if isinstance(node, dict):
            found |= set(node.get("properties", {}))
            for value in node.values():
                found |= keys(value)
        elif isinstance(node, list):
            for value in node:
                found |= keys(value)
        return found

    assert keys(schema) - documented == set()
