"""What a Python task is given (``TaskInput``, ``case_fields``) and what it may return
(``output_value``): a string, a JSON mapping or a pydantic model, within the response cap."""

from __future__ import annotations

import datetime
import math
import types
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.files import Case, CaseSpec
from pytest_llmjudge.tasks.fields import case_fields
from pytest_llmjudge.tasks.task_input import TaskInput, TaskOutputError, output_value


def make_case(**spec: Any) -> Case:
    return Case(CaseSpec.model_validate({"id": "c1", **spec}), Location("b.yaml", 3, 5))


# -- TaskInput -------------------------------------------------------------------------------------


def test_a_task_input_without_inputs_or_metadata_has_empty_mappings_and_no_ground_truth() -> None:
    given = TaskInput("c1", "B1", None)
    assert given.inputs == {} and given.metadata == {} and given.ground_truth is None
    assert TaskInput("c2", "B1", None).inputs is not given.inputs  # each case its own mapping


# -- case_fields -----------------------------------------------------------------------------------


def test_the_fields_of_a_case_put_each_input_at_the_top_level_beside_the_case_values() -> None:
    case = make_case(source_narrative="n", inputs={"country": "fr", "lang": "en"}, metadata={"k": 1})
    assert case_fields("B1", case, sees_ground_truth=False) == {
        "country": "fr",
        "lang": "en",
        "id": "c1",
        "benchmark": "B1",
        "inputs": {"country": "fr", "lang": "en"},
        "source_narrative": "n",
        "metadata": {"k": 1},
    }


def test_an_input_named_like_a_case_value_stays_under_inputs() -> None:
    case = make_case(source_narrative="real", inputs={"id": "fake", "source_narrative": "fake", "x": 1})
    fields = case_fields("B1", case, sees_ground_truth=False)
    assert fields["id"] == "c1" and fields["source_narrative"] == "real" and fields["x"] == 1
    assert fields["inputs"] == {"id": "fake", "source_narrative": "fake", "x": 1}


def test_a_case_without_narrative_or_metadata_has_no_such_field() -> None:
    fields = case_fields("B1", make_case(), sees_ground_truth=True)
    assert fields == {"id": "c1", "benchmark": "B1", "inputs": {}}


@pytest.mark.parametrize(("sees", "expected"), [(True, {"answer": "Paris"}), (False, None)])
def test_the_ground_truth_is_a_field_only_when_the_task_sees_it(sees: bool, expected: Any) -> None:
    fields = case_fields("B1", make_case(ground_truth={"answer": "Paris"}), sees_ground_truth=sees)
    assert fields.get("ground_truth") == expected


def test_changing_the_fields_does_not_change_the_case() -> None:
    case = make_case(inputs={"a": 1}, metadata={"m": 1})
    fields = case_fields("B1", case, sees_ground_truth=False)
    fields["inputs"]["a"] = 2
    fields["metadata"]["m"] = 2
    assert case.spec.inputs == {"a": 1} and case.spec.metadata == {"m": 1}


# -- output_value ----------------------------------------------------------------------------------


def test_a_string_is_the_output_as_it_is() -> None:
    assert output_value("Paris") == "Paris"


def test_a_mapping_is_the_output_as_json_values() -> None:
    produced = output_value(types.MappingProxyType({"answer": ("Paris", 1), "ok": True}))
    assert produced == {"answer": ["Paris", 1], "ok": True} and type(produced) is dict


def test_the_output_is_a_copy_that_the_task_cannot_change_later() -> None:
    returned: dict[str, Any] = {"items": [1]}
    produced = output_value(returned)
    returned["items"].append(2)
    assert produced == {"items": [1]}


class Answer(BaseModel):
    answer: str
    when: datetime.date


def test_a_pydantic_model_is_dumped_as_json_values() -> None:
    produced = output_value(Answer(answer="Paris", when=datetime.date(2024, 1, 2)))
    assert produced == {"answer": "Paris", "when": "2024-01-02"}


class LooksLikeAModel:
    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {"answer": "x"}


@pytest.mark.parametrize(
    ("value", "name"),
    [(3, "int"), (["a"], "list"), (None, "NoneType"), (LooksLikeAModel(), "LooksLikeAModel")],
)
def test_anything_else_is_refused_naming_its_type(value: Any, name: str) -> None:
    with pytest.raises(TaskOutputError) as caught:
        output_value(value)
    assert str(caught.value) == f"returned {name}; a task returns a string, a mapping or a pydantic model"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"x": math.nan}, "Out of range float values are not JSON compliant"),
        ({"x": {1, 2}}, "Object of type set is not JSON serializable"),
    ],
)
def test_a_mapping_that_is_not_json_is_refused_saying_why(value: dict[str, Any], reason: str) -> None:
    with pytest.raises(TaskOutputError, match=r"^returned a mapping that is not JSON: ") as caught:
        output_value(value)
    assert reason in str(caught.value)


def test_a_mapping_that_contains_itself_is_refused() -> None:
    value: dict[str, Any] = {}
    value["self"] = value
    with pytest.raises(TaskOutputError, match=r"^returned a mapping that is not JSON: Circular reference"):
        output_value(value)


def test_a_string_up_to_the_cap_in_utf8_bytes_passes_one_byte_more_is_refused() -> None:
    text = "é" * 3  # six bytes of UTF-8
    assert output_value(text, max_bytes=6) == text
    with pytest.raises(TaskOutputError) as caught:
        output_value(text, max_bytes=5)
    assert str(caught.value) == "returned 6 bytes of output, more than --llmjudge-max-response-bytes=5"


def test_the_size_of_a_large_output_is_written_with_thousands_separators() -> None:
    with pytest.raises(TaskOutputError, match=r"^returned 5,000 bytes of output, .*=4000$"):
        output_value("x" * 5000, max_bytes=4000)


def test_a_string_with_a_lone_surrogate_is_counted_not_refused() -> None:
    assert output_value("a\ud800", max_bytes=4) == "a\ud800"  # 1 + 3 bytes
    with pytest.raises(TaskOutputError, match="returned 4 bytes"):
        output_value("a\ud800", max_bytes=3)


def test_a_mapping_is_measured_as_compact_utf8_json() -> None:
    value = {"a": "é", "b": 1}  # {"a":"é","b":1}: 16 bytes
    assert output_value(value, max_bytes=16) == value
    with pytest.raises(TaskOutputError, match="returned 16 bytes"):
        output_value(value, max_bytes=15)


def test_a_mapping_with_a_lone_surrogate_is_measured_too() -> None:
    value = {"a": "\ud800"}  # {"a":"?"}: eight ASCII bytes and a three-byte character
    assert output_value(value, max_bytes=11) == value
    with pytest.raises(TaskOutputError, match="returned 11 bytes"):
        output_value(value, max_bytes=10)


def test_without_a_cap_any_size_passes() -> None:
    assert output_value({"x": "y" * 100_000}) == {"x": "y" * 100_000}
