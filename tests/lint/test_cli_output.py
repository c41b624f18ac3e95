"""What ``llmjudge lint`` and ``llmjudge rules`` print, compared whole: help, text, JSON, SARIF,
statistics, fixes, and the options that change which findings appear."""

from __future__ import annotations

import json
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
