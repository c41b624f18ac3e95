"""``llmjudge lint`` / ``llmjudge rules`` and ``tools/flag_compound_logic.py`` end to end."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_llmjudge.lint.cli import add_lint_parser, add_rules_parser
from tests.lint.conftest import CORPUS, REPO
from tests.lint.conftest import expected as expected_of

LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>LJ\d{3}) (?P<message>.+)$")


def llmjudge(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="llmjudge")
    commands = parser.add_subparsers(dest="command", required=True)
    add_lint_parser(commands)
    add_rules_parser(commands)
    args = parser.parse_args(argv)
    return int(args.handler(args))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the cross-file corpus repository, as the current folder."""
    shutil.copytree(CORPUS / "project", tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def test_text_output_is_path_line_col_code_message(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = llmjudge("lint", "--select", "LJ0", "benchmarks")
    out = capsys.readouterr().out.splitlines()
    findings = [LINE.match(line) for line in out if line and not line.startswith("Found")]
    assert all(findings), out
    assert {(m["path"], m["code"]) for m in findings if m} >= {
        ("benchmarks/B-CRIT2.yaml", "LJ033"),
        ("benchmarks/B-MISSING.yaml", "LJ000"),
    }
    assert out[-1].startswith("Found ")
    assert status == 1


def test_exit_zero_when_only_warnings_remain(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert llmjudge("lint", "--select", "LJ031", "benchmarks/B-NOPROMPT.yaml") == 0
    assert "LJ031" in capsys.readouterr().out


def test_json_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    llmjudge("lint", "--select", "LJ030,LJ031", "--format", "json", "benchmarks")
    found = json.loads(capsys.readouterr().out)
    assert {(f["path"], f["line"], f["code"], f["severity"]) for f in found} == {
        ("benchmarks/B-CRIT1.yaml", 6, "LJ030", "warning"),
        ("benchmarks/B-NOPROMPT.yaml", 5, "LJ031", "warning"),
        ("benchmarks/B-MISSING.yaml", 4, "LJ000", "error"),
    }


def test_sarif_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    llmjudge("lint", "--format", "sarif", "--select", "LJ032", "evaluators")
    log = json.loads(capsys.readouterr().out)
    run = log["runs"][0]
    assert log["version"] == "2.1.0"
    assert [r["ruleId"] for r in run["results"]] == ["LJ032"]
    location = run["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "evaluators/llm-judge/orphan_prompt.md"
    assert run["tool"]["driver"]["rules"][run["results"][0]["ruleIndex"]]["id"] == "LJ032"


def test_statistics(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    llmjudge("lint", "--statistics", "--select", "LJ03")
    rows = {
        line.split()[2]: line.split() for line in capsys.readouterr().out.splitlines()[1:] if "LJ0" in line
    }
    assert rows["LJ033"][:2] == ["2", "2"]
    assert rows["LJ032"][:2] == ["1", "1"]


def test_fix_reports_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "legacy_prompt.md"
    shutil.copyfile(CORPUS / "legacy/flag_focus_on_prompt.md", target)
    assert llmjudge("lint", "--isolated", "--select", "LJ02", "--fix", str(target)) == 0
    captured = capsys.readouterr()
    assert "fixed 2 (LJ020, LJ021)" in captured.err
    assert captured.out.strip() == "No findings."
    assert "EVALUATION SCOPE:" in target.read_text(encoding="utf-8")


def test_settings_from_pyproject(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.llmjudge.lint]\nignore = ["LJ031"]\nexclude = ["benchmarks/B-MISSING.yaml"]\n'
        '[tool.llmjudge.lint.per-file-ignores]\n"benchmarks/B-CRIT*.yaml" = ["LJ033"]\n',
        encoding="utf-8",
    )
    status = llmjudge("lint", "--select", "LJ03,LJ000", "benchmarks")
    codes = {m["code"] for m in map(LINE.match, capsys.readouterr().out.splitlines()) if m}
    assert codes == {"LJ030"}
    assert status == 0


def test_unknown_setting_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.llmjudge.lint]\nselct = ["LJ001"]\n', encoding="utf-8")
    assert llmjudge("lint") == 2
    assert "did you mean 'select'?" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv", [["lint", "--select", "LJ999"], ["lint", "no/such/path"], ["rules", "LJ999"]]
)
def test_usage_errors_exit_2(argv: list[str], project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert llmjudge(*argv) == 2
    assert "error:" in capsys.readouterr().err


def test_rules_lists_and_explains(capsys: pytest.CaptureFixture[str]) -> None:
    assert llmjudge("rules") == 0
    listing = capsys.readouterr().out
    assert "LJ001  split-and-logic" in listing
    assert llmjudge("rules", "split-and-logic") == 0
    assert "## Why is this bad?" in capsys.readouterr().out


def test_flag_compound_logic_tool_matches_lint_select_lj001(capsys: pytest.CaptureFixture[str]) -> None:
    folder = str(CORPUS / "logic")
    llmjudge("lint", "--isolated", "--select", "LJ001", folder)
    expected = capsys.readouterr().out
    tool = subprocess.run(
        [sys.executable, str(REPO / "tools/flag_compound_logic.py"), "--isolated", folder],
        capture_output=True,
        text=True,
        cwd=Path.cwd(),
        check=False,
    )
    assert tool.stdout == expected
    assert tool.returncode == 1
    wanted = sum(
        code == "LJ001"
        for p in (CORPUS / "logic").iterdir()
        if p.suffix == ".md"
        for code, _ in expected_of(p)
    )
    assert expected.count(" LJ001 ") == wanted


def test_opt_in_rule_runs_only_when_selected_by_code(capsys: pytest.CaptureFixture[str]) -> None:
    target = str(CORPUS / "weak" / "flag_or_opener_prompt.md")
    assert llmjudge("lint", "--isolated", target) == 1  # a snippet, not a whole prompt: LJ010
    assert "LJ004" not in capsys.readouterr().out
    assert llmjudge("lint", "--isolated", "--select", "LJ00", target) == 0
    assert capsys.readouterr().out.strip() == "No findings."
    assert llmjudge("lint", "--isolated", "--select", "LJ004", target) == 0  # a warning
    out = capsys.readouterr().out
    assert ":3:1: LJ004 bullets on lines 3, 4 may be one condition split across bullets" in out
    tool = subprocess.run(
        [sys.executable, str(REPO / "tools/flag_compound_logic.py"), "--isolated", "--weak", target],
        capture_output=True,
        text=True,
        check=False,
    )
    assert " LJ004 " in tool.stdout and tool.returncode == 0
