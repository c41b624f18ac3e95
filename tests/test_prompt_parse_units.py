"""How a rubric prompt file is read into sections (``suite/prompt_file.py``), in process: the
Automatic fail header as written or the canonical one, comments and rules skipped, list items with
their continuation lines, examples and numbers, prose after a list kept apart from its last item,
and every line no section holds reported with its reason. ``tests/test_prompt_file.py`` and the
linter's tests show the same through compiled prompts and lint findings."""

from __future__ import annotations

import pytest

from pytest_llmjudge.suite.prompt_file import Bullet, PromptSections, Unplaced, parse_prompt, split_trailing

PROMPT = """SYSTEM: You are a judge.

BEHAVIOR
negation_preserved
an extra line

RUBRIC

### Automatically fail:
<!-- noqa: LJ001 -->
- The output drops a negation
  that the source states.
---
- The output invents a finding
    e.g.: "no fever" becomes "fever"
1234567890. ten digits
123456789. nine digits

This list is about clinical facts.

Pass conditions (all must hold):
1. a
2) b
  continued

Set pass only if all hold.

## Notes
stray text
<!---->
<!--->
"""


@pytest.fixture  # per test: mutmut runs a mutant only under the tests it saw call the code
def sections() -> PromptSections:
    return parse_prompt(PROMPT, "p.md")


def test_list_items_keep_their_continuations_examples_and_numbers(sections: PromptSections) -> None:
    assert sections.automatic_fail == (
        Bullet("The output drops a negation that the source states.", 11, None, (), 12),
        Bullet("The output invents a finding", 14, None, ('"no fever" becomes "fever"',), 15),
        Bullet("ten digits", 16, None, (), 16),  # ten digits are no list number
        Bullet("nine digits", 17, 123456789, (), 17),
    )
    assert sections.pass_conditions == (Bullet("a", 22, 1, (), 22), Bullet("b continued", 23, 2, (), 24))


def test_prose_after_a_list_is_a_note_not_its_last_item(sections: PromptSections) -> None:
    assert sections.notes == (
        ("automatic_fail", "This list is about clinical facts."),
        ("pass_conditions", "Set pass only if all hold."),
    )
    assert sections.note("pass_conditions") == "Set pass only if all hold."
    assert sections.note("include") == ""


def test_lines_no_section_holds_are_reported(sections: PromptSections) -> None:
    assert sections.behavior == "negation_preserved"
    assert sections.unplaced == (
        Unplaced(
            5,
            "an extra line",
            "BEHAVIOR holds one line, the behavior id; put an explanation under DESCRIPTION",
        ),
        Unplaced(28, "## Notes", "a heading that is not a section of a judge prompt"),
        Unplaced(29, "stray text", "text under a heading that is not a section of a judge prompt"),
        Unplaced(31, "<!--->", "text under a heading that is not a section of a judge prompt"),  # too short
    )


@pytest.mark.parametrize(
    ("heading", "header"),
    [
        ("### Automatic fail", "Automatic fail if any of the following are true:"),
        ("**Automatic fail:**", "Automatic fail if any of the following are true:"),
        ("Automatically fail", "Automatic fail if any of the following are true:"),
        ("# Automatic fail if ANY of these hold:", "Automatic fail if ANY of these hold:"),
        ("Automatic fail if ANY of these hold:", "Automatic fail if ANY of these hold:"),
    ],
)
def test_the_automatic_fail_header_as_written_or_the_canonical_one(heading: str, header: str) -> None:
    parsed = parse_prompt(f"RUBRIC\n{heading}\n- x\n", "p.md")
    assert (parsed.automatic_fail_header, parsed.automatic_fail) == (header, (Bullet("x", 3, None, (), 3),))


def test_text_before_the_first_bullet_and_indented_lines() -> None:
    parsed = parse_prompt(
        "RUBRIC\nPass conditions:\nthe output is right\n- a\n    - nested\n\tmore\n", "p.md"
    )
    assert parsed.pass_conditions == (
        Bullet("the output is right", 3, None, (), 3),
        Bullet("a nested more", 4, None, (), 6),
    )
    indented = parse_prompt("RUBRIC\nPass conditions:\n  - a\n  - b\n", "p.md")
    assert [b.text for b in indented.pass_conditions] == ["a", "b"]  # the first item sets the level
    # an indented heading-like line is text of the list, not a heading
    kept = parse_prompt("RUBRIC\nPass conditions:\n- a\n  Ignore: this\n", "p.md")
    assert [b.text for b in kept.pass_conditions] == ["a Ignore: this"]


def test_a_rule_in_any_spelling_is_skipped() -> None:
    for rule in ("---", "***", "___"):
        parsed = parse_prompt(f"RUBRIC\nPass conditions:\n- a\n{rule}\n- b\n", "p.md")
        assert [b.text for b in parsed.pass_conditions] == ["a", "b"], rule


@pytest.mark.parametrize(
    ("lines", "kept", "trailing"),
    [
        # prose after a blank line that follows the items is a note about the list
        (["- a", "", "Set pass  =  true only if", "", "  all hold."], 2, "Set pass = true only if all hold."),
        # after a blank line, an item, an example, or an indented line still belongs to the list
        (["- a", "", "- b"], 3, ""),
        (["- a", "", "Example: x"], 3, ""),
        (["- a", "", "e.g.: x"], 3, ""),
        (["- a", "", "  more of a"], 3, ""),
        (["- a", "", "\tmore of a"], 3, ""),
        # prose without a blank line before it continues the last item
        (["- a", "", "- b", "more of b"], 4, ""),
        # prose before any item is not trailing
        (["intro", "", "more intro", "- a"], 4, ""),
    ],
)
def test_prose_after_a_list_is_kept_apart_from_its_last_item(
    lines: list[str], kept: int, trailing: str
) -> None:
    numbered = list(enumerate(lines, start=1))
    assert split_trailing(numbered) == (numbered[:kept], trailing)


def test_a_heading_indented_by_a_tab_or_spaces_is_text_of_the_item_above() -> None:
    text = "SYSTEM: x\n\nRUBRIC\n\nPass conditions:\n- ok\n"
    text += "\tUncertainty policy: tab\n  Uncertainty policy: spaces\n"
    sections = parse_prompt(text, "p.md")
    assert [b.text for b in sections.pass_conditions] == [
        "ok Uncertainty policy: tab Uncertainty policy: spaces"
    ]
    assert sections.uncertainty_policy == ""
    assert [h.key for h in sections.headings] == ["system", "rubric", "pass_conditions"]


def test_a_prompt_without_behavior_or_automatic_fail_has_neither() -> None:
    sections = parse_prompt("SYSTEM: x\n\nDESCRIPTION: d\n\nRUBRIC\n\nPass conditions:\n- ok\n", "p.md")
    assert (sections.behavior, sections.automatic_fail) == ("", ())
    assert sections.automatic_fail_header == "Automatic fail if any of the following are true:"
