"""The pieces under the rules: reading bullet logic, suppressions, settings, selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_llmjudge.lint import Diagnostic
from pytest_llmjudge.lint.fragments import find_splits, input_only
from pytest_llmjudge.lint.logic import conjunctions
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


FIRST = "The output leaves the weight field blank."


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        ("Output provides no acknowledgment of the gap.", "refers back with 'the gap'"),
        ("The output changes that value.", "refers back with 'that value'"),
        ("The output reports that weight in pounds.", "refers back with 'that weight'"),
        ("Either is stated in the narrative.", "refers back with 'either'"),
        ("The output does not mention it.", "refers back with 'it'"),
        ("No clarification is given.", "states an absence that is no failure on its own"),
        ("The narrative records the weight.", "only describes the inputs, not the output"),
        ("and the narrative records the weight.", "starts with 'and'"),
        ("Unless the narrative is silent on the weight.", "starts with 'unless'"),
        ("The output for this case lists no disposition.", None),
        ("If the narrative documents a fall, the output does not mention it.", None),
        ("The output adds a medication found in neither the ground truth nor the narrative.", None),
        ("The output rounds a value such that it crosses a threshold.", None),
        ("The output omits a dose (these are often charted in the narrative only).", None),
        ("Stroke: the narrative gives a time but the time field is left unknown.", None),
    ],
)
def test_strong_evidence_of_a_split(second: str, reason: str | None) -> None:
    strong, _ = find_splits([FIRST, second], [1, 2], [False, False])
    assert [r.split(" ", 2)[2] for split in strong for r in split.reasons] == ([reason] if reason else [])


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        ("or the output invents a weight.", "starts with 'or'"),
        ("The output names this protocol step as done.", "refers back with 'this protocol'"),
    ],
)
def test_weak_evidence_is_kept_apart(second: str, reason: str) -> None:
    strong, weak = find_splits([FIRST, second], [1, 2], [False, False])
    assert strong == []
    assert [r.split(" ", 2)[2] for split in weak for r in split.reasons] == [reason]


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
        ("Narrative explicitly states the age, but the age field is left unknown.", False),
        ("Chief complaint copied from the patient's own words in the narrative.", False),
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
    assert expand(["LJ00"]) == {"LJ000", "LJ001", "LJ002", "LJ003"}  # LJ004 is opt-in
    assert expand(["split-and-logic"]) == {"LJ001"}
    assert expand(["LJ004"]) == expand(["possible-split-logic"]) == {"LJ004"}
    assert "LJ004" not in selected(None, []) and "LJ004" not in selected(["ALL"], [])
    assert selected(["LJ004"], ["LJ00"]) == set()
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
