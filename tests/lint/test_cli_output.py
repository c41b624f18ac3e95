"""What ``llmjudge lint`` and ``llmjudge rules`` print, compared whole: help, text, JSON, SARIF,
statistics, fixes, and the options that change which findings appear."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from pytest_llmjudge import __version__
from pytest_llmjudge.lint.registry import all_rules, get_rule
from tests.lint.conftest import REPO
from tests.lint.test_cli import llmjudge

# A legacy prompt with one finding of each kind: LJ020 and LJ021 (safe fixes, warnings), LJ001
# (an unsafe fix, an error) and LJ010 (errors without a fix).
PROMPT = """\
SYSTEM: You are a neutral evaluator.

BEHAVIOR: dose_correct

DESCRIPTION:
Whether the output gives the dose.

Focus on:
- The dose in the ground truth.

RUBRIC

Automatic fail if any of the following are true:
- The output leaves the dose blank.
- The ground truth does not mention this.

Pass conditions (all must be satisfied):
1. The dose matches the ground truth (Note: rounding is acceptable).

Uncertainty policy:
If the information is ambiguous, set pass = false.
"""

LJ001 = (
    "dose_prompt.md:14:1: LJ001 bullets on lines 14, 15 read as one condition split across bullets"
    " (line 15 only describes the inputs, not the output); each one fails the case on its own:"
    " join them into one bullet with explicit AND"
)
LJ020 = "dose_prompt.md:8:1: LJ020 legacy 'Focus on:' list: move its items to EVALUATION SCOPE, Include"
LJ021 = "dose_prompt.md:18:38: LJ021 legacy '(Note: …)' clause: move it to Acceptable variations"


@pytest.fixture
def prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``dose_prompt.md`` in an empty project folder, the current folder."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "dose_prompt.md"
    path.write_text(PROMPT, encoding="utf-8")
    return path


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="argparse lays out help differently from 3.13 on")
def test_lint_help_describes_every_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    with pytest.raises(SystemExit) as exited:
        llmjudge("lint", "--help")
    assert exited.value.code == 0
    assert capsys.readouterr().out == (
        "usage: llmjudge lint [-h] [--format {text,json,sarif}] [--select SELECT] [--ignore IGNORE] [--fix]\n"
        "                     [--unsafe-fixes] [--statistics] [--isolated] [--force-exclude]\n"
        "                     [paths ...]\n"
        "\n"
        "Lint judge prompt files, benchmark files and prompt-template YAML files.\n"
        "\n"
        "positional arguments:\n"
        "  paths                 prompt files, benchmark files or folders\n"
        "\n"
        "options:\n"
        "  -h, --help            show this help message and exit\n"
        "  --format {text,json,sarif}\n"
        "                        output format (default: text)\n"
        "  --select SELECT       comma-separated codes, prefixes or names to run\n"
        "  --ignore IGNORE       comma-separated codes to skip\n"
        "  --fix                 apply safe fixes and report what changed\n"
        "  --unsafe-fixes        with --fix, apply unsafe fixes too (LJ001)\n"
        "  --statistics          print counts per rule instead of findings\n"
        "  --isolated            ignore [tool.llmjudge.lint] settings\n"
        "  --force-exclude       apply 'exclude' to paths named on the command line too\n"
    )


def test_an_unknown_format_is_a_usage_error_that_lints_nothing(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        llmjudge("lint", "--isolated", "--format", "xml", "dose_prompt.md")
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--format" in captured.err


@pytest.mark.parametrize(
    ("select", "status", "expected"),
    [
        pytest.param(
            "LJ020",
            0,
            f"{LJ020}\n\nFound 1 finding (0 errors, 1 warning). 1 fixable with --fix.\n",
            id="one-warning",
        ),
        pytest.param(
            "LJ001",
            1,
            f"{LJ001}\n\nFound 1 finding (1 error, 0 warnings). 1 more with --fix --unsafe-fixes.\n",
            id="one-error",
        ),
        pytest.param(
            "LJ001,LJ02",
            1,
            f"{LJ020}\n{LJ001}\n{LJ021}\n\n"
            "Found 3 findings (1 error, 2 warnings)."
            " 2 fixable with --fix. 1 more with --fix --unsafe-fixes.\n",
            id="by-position",
        ),
        pytest.param("LJ030", 0, "No findings.\n", id="none"),
    ],
)
def test_text_output_is_the_findings_by_position_then_a_summary_with_singular_and_plural_counts(
    select: str, status: int, expected: str, prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert llmjudge("lint", "--isolated", "--select", select, "dose_prompt.md") == status
    assert capsys.readouterr().out == expected


def test_json_output_is_an_indented_utf8_list_with_each_finding_and_its_fix(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert llmjudge("lint", "--isolated", "--format", "json", "--select", "LJ001,LJ021", ".") == 1
    out = capsys.readouterr().out
    found = json.loads(out)
    assert found == [
        {
            "code": "LJ001",
            "name": "split-and-logic",
            "severity": "error",
            "message": LJ001.split(" LJ001 ")[1],
            "path": "dose_prompt.md",
            "line": 14,
            "col": 1,
            "fix": {
                "description": "join the fragments into one bullet with explicit AND",
                "safe": False,
                "edits": [
                    {
                        "start": 14,
                        "end": 15,
                        "lines": [
                            "- The output leaves the dose blank AND the ground truth does not mention this."
                        ],
                    }
                ],
            },
        },
        {
            "code": "LJ021",
            "name": "note-clause",
            "severity": "warning",
            "message": "legacy '(Note: …)' clause: move it to Acceptable variations",
            "path": "dose_prompt.md",
            "line": 18,
            "col": 38,
            "fix": {
                "description": "move the note to Acceptable variations",
                "safe": True,
                "edits": [
                    {"start": 18, "end": 18, "lines": ["1. The dose matches the ground truth."]},
                    {
                        "start": 19,
                        "end": 18,
                        "lines": [
                            "",
                            "Acceptable variations (still treated as pass):",
                            "- Rounding is acceptable.",
                        ],
                    },
                ],
            },
        },
    ]
    assert out == json.dumps(found, indent=2, ensure_ascii=False) + "\n"  # "…" as is, not \u2026


def test_json_output_of_a_finding_without_a_fix_has_fix_null(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two_prompt.md").write_text(
        "SYSTEM: You judge.\n\nBEHAVIOR: a\nBEHAVIOR: b\n", encoding="utf-8"
    )
    assert llmjudge("lint", "--isolated", "--format", "json", "--select", "LJ013", ".") == 1
    assert json.loads(capsys.readouterr().out) == [
        {
            "code": "LJ013",
            "name": "multiple-behaviors",
            "severity": "error",
            "message": "second BEHAVIOR section (first on line 3): one prompt evaluates one behavior,"
            " split it into two prompt files",
            "path": "two_prompt.md",
            "line": 4,
            "col": 1,
            "fix": None,
        }
    ]


def test_sarif_output_is_a_sarif_2_1_0_log_with_every_rule_and_each_result(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert llmjudge("lint", "--isolated", "--format", "sarif", "--select", "LJ021", "dose_prompt.md") == 0
    out = capsys.readouterr().out
    log = json.loads(out)
    assert out == json.dumps(log, indent=2, ensure_ascii=False) + "\n"  # "…" as is, not \u2026
    [run] = log.pop("runs")
    assert log == {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0"}
    driver = run["tool"]["driver"]
    rules = driver.pop("rules")
    assert driver == {
        "name": "llmjudge-lint",
        "version": __version__,
        "informationUri": "https://pypi.org/project/pytest-llmjudge/",
    }
    codes = [rule.code for rule in all_rules()]
    assert [rule["id"] for rule in rules] == codes
    doc = get_rule("LJ021").doc()
    assert rules[codes.index("LJ021")] == {
        "id": "LJ021",
        "name": "note-clause",
        "shortDescription": {"text": "Legacy '(Note: …)' clause instead of Acceptable variations"},
        "fullDescription": {"text": doc},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": "warning"},
    }
    assert run["results"] == [
        {
            "ruleId": "LJ021",
            "ruleIndex": codes.index("LJ021"),
            "level": "warning",
            "message": {"text": "legacy '(Note: …)' clause: move it to Acceptable variations"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": "dose_prompt.md"},
                        "region": {"startLine": 18, "startColumn": 38},
                    }
                }
            ],
        }
    ]


def test_statistics_count_findings_and_files_per_rule_and_mark_rules_with_a_fix(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (prompt.parent / "copy_prompt.md").write_text(PROMPT, encoding="utf-8")
    assert llmjudge("lint", "--isolated", "--statistics", "--select", "LJ0", "dose_prompt.md") == 1
    assert capsys.readouterr().out == (
        "findings  files  code   name                          severity  fix\n"
        "       1      1  LJ001  split-and-logic               error     [*]\n"
        "       4      1  LJ010  missing-section               error     \n"
        "       1      1  LJ020  focus-on                      warning   [*]\n"
        "       1      1  LJ021  note-clause                   warning   [*]\n"
        "\n"
        "Found 7 findings (5 errors, 2 warnings). 2 fixable with --fix. 1 more with --fix --unsafe-fixes.\n"
    )
    assert llmjudge("lint", "--isolated", "--statistics", "--select", "LJ010,LJ020", ".") == 1
    assert capsys.readouterr().out == (
        "findings  files  code   name                          severity  fix\n"
        "       8      2  LJ010  missing-section               error     \n"
        "       2      2  LJ020  focus-on                      warning   [*]\n"
        "\n"
        "Found 10 findings (8 errors, 2 warnings). 2 fixable with --fix.\n"
    )


def test_statistics_of_a_clean_run_is_the_header_alone(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert llmjudge("lint", "--isolated", "--statistics", "--select", "LJ030", ".") == 0
    assert capsys.readouterr().out == (
        "findings  files  code   name                          severity  fix\n\nNo findings.\n"
    )


def test_ignore_drops_each_comma_separated_code(prompt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        llmjudge("lint", "--isolated", "--select", "LJ0", "--ignore", "LJ010, LJ001", "dose_prompt.md") == 0
    )
    assert capsys.readouterr().out == (
        f"{LJ020}\n{LJ021}\n\nFound 2 findings (0 errors, 2 warnings). 2 fixable with --fix.\n"
    )


def test_ignore_adds_to_the_ignore_setting(prompt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (prompt.parent / "pyproject.toml").write_text(
        '[tool.llmjudge.lint]\nignore = ["LJ010"]\n', encoding="utf-8"
    )
    assert llmjudge("lint", "--select", "LJ0", "--ignore", "LJ001,LJ021", "dose_prompt.md") == 0
    assert (
        capsys.readouterr().out
        == f"{LJ020}\n\nFound 1 finding (0 errors, 1 warning). 1 fixable with --fix.\n"
    )


def test_isolated_ignores_the_settings_in_pyproject(prompt: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (prompt.parent / "pyproject.toml").write_text(
        '[tool.llmjudge.lint]\nselect = ["LJ001"]\nignore = ["LJ020"]\n', encoding="utf-8"
    )
    assert llmjudge("lint", "--select", "LJ020", "dose_prompt.md") == 0
    assert capsys.readouterr().out == "No findings.\n"
    assert llmjudge("lint", "--isolated", "--select", "LJ020", "dose_prompt.md") == 0
    assert (
        capsys.readouterr().out
        == f"{LJ020}\n\nFound 1 finding (0 errors, 1 warning). 1 fixable with --fix.\n"
    )


def test_force_exclude_skips_excluded_files_named_on_the_command_line(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (prompt.parent / "pyproject.toml").write_text(
        '[tool.llmjudge.lint]\nexclude = ["dose_prompt.md"]\n', encoding="utf-8"
    )
    assert llmjudge("lint", "--select", "LJ020", "dose_prompt.md") == 0
    assert (
        capsys.readouterr().out
        == f"{LJ020}\n\nFound 1 finding (0 errors, 1 warning). 1 fixable with --fix.\n"
    )
    assert llmjudge("lint", "--select", "LJ020", "--force-exclude", "dose_prompt.md") == 0
    assert capsys.readouterr().out == "No findings.\n"


FIXED_SAFE = """\
SYSTEM: You are a neutral evaluator.

BEHAVIOR: dose_correct

DESCRIPTION:
Whether the output gives the dose.

EVALUATION SCOPE:
Include:
- The dose in the ground truth.

RUBRIC

Automatic fail if any of the following are true:
- The output leaves the dose blank.
- The ground truth does not mention this.

Pass conditions (all must be satisfied):
1. The dose matches the ground truth.

Acceptable variations (still treated as pass):
- Rounding is acceptable.

Uncertainty policy:
If the information is ambiguous, set pass = false.
"""


def test_fix_applies_safe_fixes_and_reports_them_on_stderr(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert llmjudge("lint", "--isolated", "--select", "LJ001,LJ02", "--fix", "dose_prompt.md") == 1
    captured = capsys.readouterr()
    assert captured.err == "dose_prompt.md: fixed 2 (LJ020, LJ021)\n"
    assert captured.out == (
        "dose_prompt.md:15:1: LJ001 bullets on lines 15, 16 read as one condition split across bullets"
        " (line 16 only describes the inputs, not the output); each one fails the case on its own:"
        " join them into one bullet with explicit AND\n"
        "\n"
        "Found 1 finding (1 error, 0 warnings). 1 more with --fix --unsafe-fixes.\n"
    )
    assert prompt.read_text(encoding="utf-8") == FIXED_SAFE


def test_unsafe_fixes_with_fix_applies_the_unsafe_fixes_too(
    prompt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        llmjudge("lint", "--isolated", "--select", "LJ001,LJ02", "--fix", "--unsafe-fixes", "dose_prompt.md")
        == 0
    )
    captured = capsys.readouterr()
    assert captured.err == "dose_prompt.md: fixed 3 (LJ020, LJ001, LJ021)\n"
    assert captured.out == "No findings.\n"
    joined = "- The output leaves the dose blank AND the ground truth does not mention this.\n"
    assert prompt.read_text(encoding="utf-8") == FIXED_SAFE.replace(
        "- The output leaves the dose blank.\n- The ground truth does not mention this.\n", joined
    )


def test_rules_markdown_prints_the_rules_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert llmjudge("rules", "--markdown") == 0
    assert capsys.readouterr().out == (REPO / "docs" / "rules.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("rule", "heading"),
    [
        ("LJ000", "LJ000 invalid-file (error)"),
        ("focus-on", "LJ020 focus-on (warning, fixable)"),
        ("LJ004", "LJ004 possible-split-logic (warning, fixable, opt-in)"),
    ],
)
def test_rules_explains_a_rule_under_a_heading_with_its_severity_fix_and_opt_in(
    rule: str, heading: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert llmjudge("rules", rule) == 0
    code = heading.split()[0]
    assert capsys.readouterr().out == f"{heading}\n\n{get_rule(code).doc()}\n"


def test_rules_lists_every_rule_with_severity_fix_mark_and_summary(
    capsys: pytest.CaptureFixture[str], snapshot: SnapshotAssertion
) -> None:
    assert llmjudge("rules") == 0
    assert capsys.readouterr().out == snapshot


# Prompt-template YAML files, each with the findings it must produce (or none).
TEMPLATES = {
    "a_undeclared_and_unused.yaml": (
        "\n"  # a blank first line: lines and columns still count from the start of the file
        "prompt:\n"
        '  template: "Passage: {{ passage }}\\nAnswer: {{answer}}"\n'
        "  template_variables: [passage, label]\n"
    ),
    "b_not_a_string.yaml": "prompt:\n  template: 42\n",
    "c_variables_not_a_list.yaml": 'template: "Q: {{ q }}"\ntemplate_variables: q\n',
    "d_invalid.yaml": 'template: "Q: {{ q }"\ntemplate_variables: [q]\n',
    "e_second_line.yaml": '\ntemplate: "Q: {{ q }}"\n',
    "f_messages.yaml": (
        "messages:\n"
        "  - role: system\n"
        "    content: You answer.\n"
        "  - role: user\n"
        "    content: |\n"
        "      Question: {{ question }}\n"
        "      Passage: {{passage}}\n"
        "template_variables:\n"
        "  - question\n"
        "  - label\n"
    ),
    "g_message_without_role.yaml": 'messages:\n  - content: "Q: {{ q }}"\n',
    "h_prompt_messages.yaml": (
        'prompt:\n  messages:\n    - role: user\n      content: "Q: {{ q }}"\n  template_variables: [q, z]\n'
    ),
    "i_suite_with_code.yaml": "code: X-1\nbenchmarks: [a]\ntemplate_variables: [x]\n",
    "j_loop.yaml": 'template: "{% for x in xs %}{{ x }}{% endfor %} {{ y }}"\ntemplate_variables: [xs]\n',
    "k_message_without_content.yaml": "messages:\n  - role: user\n",
    "l_list.yaml": "- a\n- b\n",
    "m_use_not_found_in_text.yaml": "prompt:\n  template: \"{{ {'a': 1}[k] }}\"\n  template_variables: []\n",
    "n_benchmark_with_messages.yaml": 'code: X-2\nmessages:\n  - role: user\n    content: "{{ q }}"\n',
}


def test_template_findings_name_the_file_line_column_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in TEMPLATES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert llmjudge("lint", "--isolated", "--select", "LJ04", ".") == 1
    assert capsys.readouterr().out == (
        "a_undeclared_and_unused.yaml:3:46: LJ040 template uses '{{answer}}'"
        " but template_variables does not declare 'answer'\n"
        "a_undeclared_and_unused.yaml:4:33: LJ041 template_variables declares 'label'"
        " but the template never uses it\n"
        "b_not_a_string.yaml:2:3: LJ000 template: template must be a string\n"
        "c_variables_not_a_list.yaml:2:1: LJ000 template_variables:"
        " template_variables must be a list of names\n"
        "d_invalid.yaml:1:1: LJ000 template: invalid template: unexpected '}'\n"
        "e_second_line.yaml:2:15: LJ040 template uses '{{q}}' but template_variables does not declare 'q'\n"
        "f_messages.yaml:7:16: LJ040 template uses '{{passage}}'"
        " but template_variables does not declare 'passage'\n"
        "f_messages.yaml:10:5: LJ041 template_variables declares 'label' but the template never uses it\n"
        "g_message_without_role.yaml:2:5: LJ000 messages[0].role: required field is missing\n"
        "h_prompt_messages.yaml:5:27: LJ041 template_variables declares 'z' but the template never uses it\n"
        "j_loop.yaml:1:49: LJ040 template uses '{{y}}' but template_variables does not declare 'y'\n"
        "k_message_without_content.yaml:2:5: LJ000 messages[0].content: required field is missing\n"
        "m_use_not_found_in_text.yaml:2:3: LJ040 template uses '{{k}}'"
        " but template_variables does not declare 'k'\n"
        "n_benchmark_with_messages.yaml:2:1: LJ000 messages: unknown key 'messages'\n"
        "\n"
        "Found 14 findings (11 errors, 3 warnings).\n"
    )


AUTOMATIC_FAIL = "Automatic fail if any of the following are true:\n"


@pytest.mark.parametrize(
    ("bullets", "fixed"),
    [
        pytest.param(
            "- The output omits the time a medication was given\n"
            "  <!-- the time of the first dose -->\n"
            "\n"
            "  in the medication list.\n"
            '  e.g.: narrative "ASA 324 mg at 14:05", output "ASA 324 mg".\n'
            "- The narrative records this time explicitly.\n"
            '  Example: "given at 14:05".\n'
            "\n"
            "Read the list in order.\n"
            "- The output invents a medication.\n",
            "- The output omits the time a medication was given in the medication list"
            " AND the narrative records this time explicitly.\n"
            "  <!-- the time of the first dose -->\n"
            '  e.g.: narrative "ASA 324 mg at 14:05", output "ASA 324 mg".\n'
            '  Example: "given at 14:05".\n'
            "\n"
            "Read the list in order.\n"
            "- The output invents a medication.\n",
            id="comment-blank-and-example-lines",
        ),
        pytest.param(
            "- The output omits the time a medication was given\n"
            "in the medication list.\n"
            "  <!-- the time of the first dose -->\n"
            "as a time of day.\n"
            "- The narrative records this time explicitly.\n"
            "- The output invents a medication.\n",
            "- The output omits the time a medication was given in the medication list. as a time of day"
            " AND the narrative records this time explicitly.\n"
            "  <!-- the time of the first dose -->\n"
            "- The output invents a medication.\n",
            id="unindented-continuation-lines",
        ),
        pytest.param(
            "- The output omits the time a medication was given\n"
            "\n"
            " in the medication list.\n"
            "- The narrative records this time explicitly.\n"
            "- The output invents a medication.\n",
            "- The output omits the time a medication was given in the medication list"
            " AND the narrative records this time explicitly.\n"
            "- The output invents a medication.\n",
            id="continuation-after-a-blank-line",
        ),
    ],
)
def test_joining_split_bullets_keeps_each_bullets_continuation_lines_and_moves_comments_and_examples_below(
    bullets: str,
    fixed: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "time_prompt.md"
    path.write_text(AUTOMATIC_FAIL + bullets, encoding="utf-8")
    assert (
        llmjudge("lint", "--isolated", "--select", "LJ001", "--fix", "--unsafe-fixes", "time_prompt.md") == 0
    )
    assert capsys.readouterr().err == "time_prompt.md: fixed 1 (LJ001)\n"
    assert path.read_text(encoding="utf-8") == AUTOMATIC_FAIL + fixed
