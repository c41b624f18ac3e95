"""What a newcomer hits: paths printed by a run work from where pytest ran, and every
``llmjudge`` command finds the project from a subfolder, as pytest does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_llmjudge.cli.main import main
from tests.conftest import GOOD, Suite


def _printed(output: str, label: str) -> Path:
    found = re.search(rf"^{label}: (.+)$", output, re.M)
    assert found, output
    return Path(found.group(1))


def test_the_printed_paths_open_from_a_subfolder(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    suite.benchmark("A-OK1", GOOD)
    sub = suite.root / "notes"
    sub.mkdir()
    monkeypatch.chdir(sub)
    result = suite.run(str(suite.root / "benchmarks"), "--llmjudge-html=report.html")
    assert result.ret == 0, result.stdout.str()
    output = result.stdout.str()
    results_file = _printed(output, "results file")
    assert results_file.is_file(), output  # from here, where pytest ran
    assert results_file.resolve().parent == suite.root / ".llmjudge" / "runs"
    assert _printed(output, "HTML report") == Path("report.html") and (sub / "report.html").is_file()


def test_the_commands_find_the_project_from_a_subfolder(
    suite: Suite, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite.benchmark("A-OK1", GOOD)
    assert suite.run("benchmarks").ret == 0
    (written,) = (suite.root / ".llmjudge" / "runs").glob("*.json")
    sub = suite.root / "benchmarks" / "a"
    monkeypatch.chdir(sub)
    capsys.readouterr()

    assert main(["runs"]) == 0
    assert written.name in capsys.readouterr().out

    assert main(["show"]) == 0  # the project's newest run
    assert "1 case(s): 1 passed" in capsys.readouterr().out
    assert main(["show", f".llmjudge/runs/{written.name}"]) == 0  # as a run at the root printed it
    assert "1 case(s): 1 passed" in capsys.readouterr().out

    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {suite.root / '.llmjudge' / 'cache.sqlite'}" in out
    assert "entries: 1 verdict(s)" in out
