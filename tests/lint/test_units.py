"""The pieces under the rules: reading bullet logic, suppressions, settings, selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_llmjudge.lint import Diagnostic
from pytest_llmjudge.lint.logic import conjunctions, input_only, reference_back
from pytest_llmjudge.lint.noqa import parse_suppressions
from pytest_llmjudge.lint.registry import SelectionError, expand, selected
from pytest_llmjudge.lint.settings import SettingsError, settings_from_table


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("The field is blank and the narrative states the value.", ["and"]),
        ("Name, dose and route match the ground truth.", []),
        ("The output swaps the systolic and diastolic values.", []),
        ("Field is blank AND narrative lacks it OR output invents it.", ["and", "or"]),
        ("The output lists the dose and the route is wrong.", ["and"]),
        ("The output records a finding the narrative and the ground truth both negate.", []),
    ],
)
def test_conjunctions_that_join_conditions(text: str, words: list[str]) -> None:
    assert [c.word for c in conjunctions(text)] == words


def test_grouping_by_parentheses_and_either() -> None:
    assert all(
        c.grouped
        for c in conjunctions("A is blank AND (the narrative states it OR the truth lists it)")
        if c.word == "or"
    )
    assert all(
        c.grouped
        for c in conjunctions("X is set AND either the narrative is silent or the truth is")
        if c.word == "or"
    )


@pytest.mark.parametrize(
    ("text", "reference"),
    [
        ("Output provides no acknowledgment of the gap.", "the gap"),
        ("The output changes that value.", "that value"),
        ("Either is stated in the narrative.", "either"),
        ("The output does not mention it.", "it"),
        ("The output for this case lists no disposition.", None),
        ("If the narrative documents a fall, the output does not mention it.", None),
        ("The output adds a medication found in neither the ground truth nor the narrative.", None),
    ],
)
def test_reference_back(text: str, reference: str | None) -> None:
    assert reference_back(text) == reference


@pytest.mark.parametrize(
    ("text", "only_inputs"),
    [
        ("Narrative does not contain this information.", True),
        ("The ground truth lists more than one route.", True),
        ("The output omits a medication the narrative records.", False),
        ("A finding negated in the narrative appears as present.", False),
        ("Any administered medication in the ground truth is missing.", False),
        ("The expected output contains a dose.", True),
        ("Field is blank.", False),
    ],
)
def test_input_only(text: str, only_inputs: bool) -> None:
    assert input_only(text) is only_inputs


def _diagnostic(code: str, line: int) -> Diagnostic:
    return Diagnostic(code, "m", "p", line, 1)


def test_noqa_forms() -> None:
    hidden = parse_suppressions(
        [
            "- a <!-- llmjudge: noqa: LJ001 -->",
            "<!-- llmjudge: noqa: LJ002, LJ003 -->",
            "- b",
            "code: X  # llmjudge: noqa",
        ]
    )
    assert hidden.hides(_diagnostic("LJ001", 1)) and not hidden.hides(_diagnostic("LJ002", 1))
    assert hidden.hides(_diagnostic("LJ003", 3)) and not hidden.hides(_diagnostic("LJ001", 3))
    assert hidden.hides(_diagnostic("LJ030", 4))
    assert parse_suppressions(["<!-- llmjudge: noqa-file: LJ010 -->"]).hides(_diagnostic("LJ010", 40))


def test_selection() -> None:
    assert expand(["LJ00"]) == {"LJ000", "LJ001", "LJ002", "LJ003"}
    assert expand(["split-and-logic"]) == {"LJ001"}
    assert selected(["LJ001"], []) == {"LJ000", "LJ001"}
    assert "LJ000" not in selected(None, ["LJ000"])
    with pytest.raises(SelectionError):
        expand(["LJ9"])


def test_settings_validation(tmp_path: Path) -> None:
    settings = settings_from_table({"select": ["LJ0"], "per-file-ignores": {"a/*.md": ["LJ010"]}}, tmp_path)
    assert settings.select == ("LJ0",) and settings.per_file_ignores == (("a/*.md", ("LJ010",)),)
    with pytest.raises(SettingsError, match="did you mean 'ignore'"):
        settings_from_table({"ignor": []}, tmp_path)
    with pytest.raises(SettingsError, match="list of strings"):
        settings_from_table({"select": "LJ001"}, tmp_path)
