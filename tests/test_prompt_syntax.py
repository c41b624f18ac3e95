"""One prompt syntax, never half-read: Markdown headings are sections, and a line no section holds,
or a missing required section, stops the run at collection with its line and the accepted forms."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_llmjudge.compile.request import compile_rubric, system_instructions
from pytest_llmjudge.lint import Linter, LintSettings
from pytest_llmjudge.suite.prompt_file import parse_prompt
from pytest_llmjudge.suite.prompt_syntax import problems
from tests.conftest import Suite

REPO = Path(__file__).resolve().parents[1]
PROMPT = "evaluators/llm-judge/greeting_prompt.md"
MARKDOWN_PROMPT = """\
# SYSTEM
You are a strict greeting evaluator.
Judge only the greeting.

## BEHAVIOR
greeting_present

## DESCRIPTION
Whether the output greets the user.

## EVALUATION SCOPE
### Include
- The first sentence of the output.
### Ignore
- Punctuation.

## RUBRIC
### Automatic fail
- The output has no greeting.

### Pass conditions
1. The output greets the user.

### Acceptable variations
- "Hi" for "hello".

### Uncertainty policy
If unsure, set pass = false.

## INPUTS
### CANDIDATE_OUTPUT
{candidate_output}
"""
BENCHMARK = f"code: A-G1\nllm_prompt_file: {PROMPT}\ncases:\n  - id: hello\n    candidate_output: hello\n"


def greeting(suite: Suite, prompt: str) -> None:
    suite.write(PROMPT, prompt, dedent=False)
    suite.benchmark("A-G1", BENCHMARK)


def test_markdown_headings_send_their_system_text_to_the_judge(suite: Suite) -> None:
    greeting(suite, MARKDOWN_PROMPT)
    result = suite.run("benchmarks", "--snapshot-update", syrupy=True)
    result.assert_outcomes(passed=2)
    text = (suite.root / "benchmarks/a/__snapshots__/A-G1.ambr").read_text()
    assert "You are a strict greeting evaluator.\n      Judge only the greeting." in text
    assert "BEHAVIOR: greeting_present" in text
    assert "DESCRIPTION:\n      Whether the output greets the user." in text
    assert "Include:\n      - The first sentence of the output." in text
    assert "Ignore:\n      - Punctuation." in text
    assert "- The output has no greeting." in text and "1. The output greets the user." in text
    assert '- "Hi" for "hello".' in text and "If unsure, set pass = false." in text


def test_llmjudge_compile_shows_the_markdown_system_text(suite: Suite) -> None:
    greeting(suite, MARKDOWN_PROMPT)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge.cli.main", "compile", "benchmarks/a/A-G1.yaml"],
        cwd=suite.root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "You are a strict greeting evaluator." in done.stdout
    assert "Whether the output greets the user." in done.stdout


def test_every_content_line_of_a_markdown_prompt_reaches_the_request() -> None:
    sections = parse_prompt(MARKDOWN_PROMPT, "p.md")
    assert not problems(sections)
    sent = system_instructions(sections.system) + "\n" + compile_rubric(sections, "A-G1")
    assert "Automatic fail if any of the following are true:\n- The output has no greeting." in sent
    headings = {h.line for h in sections.headings}
    inputs = sections.heading("inputs")
    assert inputs is not None
    for number, line in enumerate(MARKDOWN_PROMPT.splitlines(), start=1):
        if line.strip() and number not in headings and number < inputs.line:
            assert line.lstrip("-0123456789. ").strip() in sent, line


@pytest.mark.parametrize(
    ("change", "marker", "reason"),
    [
        (lambda p: "Greeting judge\n\n" + p, "Greeting judge", "text before the first section"),
        (
            lambda p: p.replace("## RUBRIC\n", "## RUBRIC\nBe strict.\n"),
            "Be strict.",
            "text directly under RUBRIC",
        ),
        (
            lambda p: p.replace("## RUBRIC\n", "## Notes\nKeep it short.\n\n## RUBRIC\n"),
            "## Notes",
            "a heading that is not a section",
        ),
        (
            lambda p: p.replace("greeting_present\n", "greeting_present\nIt checks hellos.\n"),
            "It checks hellos.",
            "BEHAVIOR holds one line",
        ),
        (
            lambda p: p + "\nThe output may be empty.\n",
            "The output may be empty.",
            "INPUTS holds only input names",
        ),
        (lambda p: p + "\n## RUBRIC\n- late\n", "- late", "a section after INPUTS"),
    ],
    ids=["preamble", "under-rubric", "unknown-heading", "behavior-line", "inputs-text", "after-inputs"],
)
def test_a_line_no_section_holds_is_a_collection_error_at_its_line(
    suite: Suite, change: Callable[[str], str], marker: str, reason: str
) -> None:
    prompt = change(MARKDOWN_PROMPT)
    greeting(suite, prompt)
    line = prompt.splitlines().index(marker) + 1
    if marker == "- late":
        line -= 1  # the misplaced RUBRIC heading itself is the first line reported
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting benchmarks/a/A-G1.yaml*",
            f"{PROMPT}:{line}:1: prompt: line not sent to the judge, {reason}*",
            "  hint: start each section with its heading, such as `SYSTEM: ...` or `# SYSTEM`*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert result.ret == 1
    assert suite.judge_calls() == []


def test_missing_system_is_a_collection_error_showing_both_forms(suite: Suite) -> None:
    greeting(
        suite,
        MARKDOWN_PROMPT.replace(
            "# SYSTEM\nYou are a strict greeting evaluator.\nJudge only the greeting.\n", ""
        ),
    )
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines(
        [f"{PROMPT}:2:1: SYSTEM: missing section SYSTEM, written `SYSTEM: <instructions>` or `# SYSTEM`"]
    )
    assert result.ret == 1


def test_empty_description_and_no_rubric_are_collection_errors(suite: Suite) -> None:
    prompt = "SYSTEM: You judge.\n\nDESCRIPTION:\n\nRUBRIC\n\nUncertainty policy:\nIf unsure, fail.\n"
    greeting(suite, prompt)
    result = suite.run("benchmarks")
    result.stdout.fnmatch_lines(
        [f"{PROMPT}:3:1: DESCRIPTION: section DESCRIPTION is empty (and 1 more, at line 7)"]
    )
    assert result.ret == 1


def test_lint_reports_the_same_line_and_names_the_forms(tmp_path: Path) -> None:
    path = tmp_path / "greeting_prompt.md"
    path.write_text(
        MARKDOWN_PROMPT.replace("## RUBRIC\n", "## RUBRIC\nBe strict.\n").replace(
            "## DESCRIPTION\n", "## Goal of it\n"
        )
    )
    found = Linter(LintSettings(root=tmp_path), base=tmp_path).lint([path])
    messages = {(d.code, d.line): d.message for d in found}
    assert messages[("LJ016", 8)].startswith("line not sent to the judge: a heading that is not a section")
    assert messages[("LJ016", 18)].startswith("line not sent to the judge: text directly under RUBRIC")
    assert (
        "missing section DESCRIPTION, written `DESCRIPTION:` or `## DESCRIPTION`" in messages[("LJ010", 11)]
    )


def test_the_repository_prompts_are_read_whole() -> None:
    paths = [*REPO.glob("evaluators/llm-judge/*_prompt.md"), *REPO.glob("examples/**/*_prompt.md")]
    assert len(paths) >= 4
    for path in paths:
        sections = parse_prompt(path.read_text(encoding="utf-8"), path.name)
        assert problems(sections) == [], path
