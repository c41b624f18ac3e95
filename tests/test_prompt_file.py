"""Prompt files: the canonical structure and the variations real files show."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from pytest_llmjudge.compile.request import DEFAULT_UNCERTAINTY, compile_rubric, sections_from_fields
from pytest_llmjudge.suite import files as spec
from pytest_llmjudge.suite.errors import Location
from pytest_llmjudge.suite.prompt_file import Bullet, PromptSections, Unplaced, parse_prompt

REPO = Path(__file__).resolve().parents[1]
MEDICATIONS = "evaluators/llm-judge/medications_extracted_prompt.md"
NEGATION = "evaluators/llm-judge/negation_simple_prompt.md"


def parse(text: str) -> PromptSections:
    return parse_prompt(textwrap.dedent(text), "p.md")


def texts(bullets: tuple[Bullet, ...]) -> list[str]:
    return [b.text for b in bullets]


def line_of(path: str, start: str) -> int:
    lines = (REPO / path).read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.startswith(start))


def test_canonical_prompt_file() -> None:
    sections = parse_prompt((REPO / MEDICATIONS).read_text(), MEDICATIONS)
    assert sections.system.startswith("You are a neutral medical documentation evaluator.\n")
    assert sections.system.endswith(
        "Respond only with a single JSON object. Do not include any text before or after the JSON."
    )
    assert sections.behavior == "medications_extracted_correct"
    assert sections.description.startswith("Whether the output lists every medication administered")
    assert texts(sections.include) == [
        "Medications recorded as administered in the ground truth.",
        "Dose, units and route of each medication.",
    ]
    assert texts(sections.ignore) == [
        "Medications the narrative mentions only as home medications.",
        "Ordering, capitalisation and formatting differences.",
    ]
    assert sections.automatic_fail_header == "Automatic fail if any of the following are true:"
    assert len(sections.automatic_fail) == 3
    assert sections.automatic_fail[1].examples == (
        'ground truth "aspirin 324 mg PO", output "aspirin 32 mg PO".',
    )
    assert [b.number for b in sections.pass_conditions] == [1, 2, 3]
    assert (
        texts(sections.acceptable_variations)[0] == "Brand vs generic names for the same active ingredient."
    )
    assert sections.uncertainty_policy.startswith(
        "If the information is ambiguous or incomplete, set pass = false"
    )
    assert sections.output_instruction == ""  # the SYSTEM's "Respond only with JSON" stays in SYSTEM
    assert sections.automatic_fail[0].line == line_of(MEDICATIONS, "- Any administered medication")
    assert sections.heading("inputs") is not None


def test_multi_line_bullet_and_trailing_json_block() -> None:
    sections = parse_prompt((REPO / NEGATION).read_text(), NEGATION)
    drop = sections.automatic_fail[1]
    assert drop.text == (
        "The output drops the negation of a finding that the narrative explicitly negates, so that the "
        "finding reads as present."
    )
    assert (drop.line, drop.end_line) == (
        line_of(NEGATION, "- The output drops"),
        line_of(NEGATION, "  finding reads"),
    )
    assert sections.output_instruction == (
        'Respond ONLY with compact JSON: {"pass": true|false, '
        '"reason": "<50-200 characters citing the evidence>"}'
    )
    assert "Respond ONLY" not in sections.uncertainty_policy


def test_example_lines_attach_to_their_bullet() -> None:
    sections = parse(
        """\
        RUBRIC

        Automatic fail if any of the following are true:
        - A dose is wrong.
          Example: ground truth "324 mg", output "32 mg".
          e.g.: units changed from mg to mcg
        - A medication is invented.
        Examples: output adds "ibuprofen" that nobody gave.
        """
    )
    wrong, invented = sections.automatic_fail
    assert wrong.examples == ('ground truth "324 mg", output "32 mg".', "units changed from mg to mcg")
    assert (wrong.line, wrong.end_line) == (4, 6)
    assert invented.examples == ('output adds "ibuprofen" that nobody gave.',)


def test_nested_bullets_belong_to_their_parent() -> None:
    sections = parse(
        """\
        EVALUATION SCOPE:
        Include:
        - Administered medications.
          - Including PRN doses.
          * And one-time doses.
        - Routes.
        """
    )
    assert texts(sections.include) == [
        "Administered medications. Including PRN doses. And one-time doses.",
        "Routes.",
    ]


def test_crlf_and_cr_line_endings_parse_like_lf() -> None:
    text = (REPO / MEDICATIONS).read_text()
    lf = parse_prompt(text, MEDICATIONS)
    assert parse_prompt(text.replace("\n", "\r\n"), MEDICATIONS) == lf
    assert parse_prompt(text.replace("\n", "\r"), MEDICATIONS) == lf
    assert (
        parse_prompt(text.replace("\n", "\r\n"), MEDICATIONS).automatic_fail[2].line
        == lf.automatic_fail[2].line
    )


def test_markdown_headings_and_bold_labels() -> None:
    sections = parse(
        """\
        # Judge prompt: vitals

        ## SYSTEM:
        You are a neutral evaluator.

        ## BEHAVIOUR: vitals_transcribed

        ## Goal:
        Whether vital signs keep their values.

        ## EVALUATION SCOPE
        **Include:**
        - Stated vital signs.
        **Ignore:**
        - Qualitative descriptions.

        ## RUBRIC
        **Automatic fail if any of the following are true:**
        - A value changed.

        **Pass conditions (all must be satisfied):**
        1. Every stated value is present.
        2) Units match.

        Set pass = true only if all conditions 1–2 hold. Otherwise set pass = false.

        ### Uncertainty policy:
        If unsure, set pass = false.
        """
    )
    assert (sections.system, sections.behavior) == ("You are a neutral evaluator.", "vitals_transcribed")
    assert sections.description == "Whether vital signs keep their values."
    assert texts(sections.include) == ["Stated vital signs."] and texts(sections.ignore) == [
        "Qualitative descriptions."
    ]
    assert sections.automatic_fail_header == "Automatic fail if any of the following are true:"
    assert [(b.number, b.text) for b in sections.pass_conditions] == [
        (1, "Every stated value is present."),
        (2, "Units match."),
    ]
    assert sections.note("pass_conditions").startswith("Set pass = true only if all conditions 1–2 hold.")
    assert sections.uncertainty_policy == "If unsure, set pass = false."
    assert Unplaced(1, "# Judge prompt: vitals", "a heading that is not a section of a judge prompt") in (
        sections.unplaced
    )


def test_inputs_placeholders_are_not_headings() -> None:
    sections = parse(
        """\
        RUBRIC
        Automatic fail if any of the following are true:
        - The output is wrong.

        INPUTS

        GROUND_TRUTH:
        {ground_truth}

        DESCRIPTION: not a heading here
        CANDIDATE_OUTPUT:
        {candidate_output}
        """
    )
    assert sections.description == ""
    assert [h.key for h in sections.headings] == ["rubric", "automatic_fail", "inputs"]


def test_trailing_json_instruction_after_inputs() -> None:
    sections = parse(
        """\
        RUBRIC
        Automatic fail if any of the following are true:
        - The output is wrong.

        INPUTS
        CANDIDATE_OUTPUT:
        {candidate_output}

        Return only compact JSON with keys "pass" and "reason".
        """
    )
    assert sections.output_instruction == 'Return only compact JSON with keys "pass" and "reason".'


def test_benchmark_without_prompt_file_gets_sections_from_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "benchmarks/A-VIT1.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        textwrap.dedent(
            """\
            code: A-VIT1
            concept: >
              Vital signs stated in the narrative appear in the output
              with the same values.
            inclusion_criteria:
              - Apply when the narrative states vital signs. Flag if the output changes a value.
              - Flag if the output omits a stated vital sign.
            exclusion_criteria: Do not apply when vitals are only described qualitatively.
            examples:
              - "Narrative: HR 88. Output: HR 98."
            """
        )
    )
    benchmark = spec.load_benchmark(path, "benchmarks/A-VIT1.yaml", tmp_path)
    sections = sections_from_fields(benchmark)
    assert sections.behavior == "A-VIT1"
    assert (
        sections.description
        == "Vital signs stated in the narrative appear in the output with the same values."
    )
    assert texts(sections.include) == ["The narrative states vital signs."]
    assert texts(sections.automatic_fail) == [
        "The output changes a value.",
        "The output omits a stated vital sign.",
    ]
    assert texts(sections.ignore) == ["Vitals are only described qualitatively."]
    assert sections.examples == ("Narrative: HR 88. Output: HR 98.",)
    assert sections.pass_conditions and sections.uncertainty_policy == DEFAULT_UNCERTAINTY
    assert benchmark.location == Location("benchmarks/A-VIT1.yaml", 1, 1)
    rubric = compile_rubric(sections, benchmark.code)
    for part in [
        "BEHAVIOR: A-VIT1",
        "Include:\n- The narrative states vital signs.",
        "Ignore:\n- Vitals are only described qualitatively.",
        "Automatic fail if any of the following are true:\n- The output changes a value.",
        "EXAMPLES OF FAILURES (few-shot):\n- Narrative: HR 88. Output: HR 98.",
    ]:
        assert part in rubric


@pytest.mark.parametrize("path", [MEDICATIONS, NEGATION])
def test_every_parsed_bullet_points_at_its_line(path: str) -> None:
    lines = (REPO / path).read_text().splitlines()
    sections = parse_prompt("\n".join(lines), path)
    for bullet in sections.include + sections.ignore + sections.automatic_fail + sections.pass_conditions:
        assert bullet.text.split()[0] in lines[bullet.line - 1]


@pytest.mark.parametrize(
    "body",
    [f"- a{' ' * 50_000}b\n", "- " + "<!--" * 20_000 + "\n", "- start\n" + "  more\n" * 300_000],
    ids=["50000-spaces", "20000-unclosed-comments", "300000-continuation-lines"],
)
def test_long_hostile_prompts_parse_and_compile_quickly(body: str) -> None:
    # A hang guard only (took 17.7 s and 11 s); bench/parse_scaling.py shows linear growth.
    start = time.perf_counter()
    sections = parse("SYSTEM: x\n\nRUBRIC\n\nAutomatic fail if any of the following are true:\n" + body)
    compile_rubric(sections, "X")
    assert time.perf_counter() - start < 5.0
    assert len(sections.automatic_fail) == 1
