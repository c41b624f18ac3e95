"""The JSON report for the repository's own example prompts and benchmarks, as a syrupy snapshot."""

from __future__ import annotations

import json
from pathlib import Path

from syrupy.assertion import SnapshotAssertion

from pytest_llmjudge.lint import Linter, load_settings
from pytest_llmjudge.lint.formats import render_json
from tests.lint.conftest import REPO


def test_json_report_for_the_example_suite(snapshot: SnapshotAssertion) -> None:
    linter = Linter(load_settings(REPO), base=REPO)
    found = linter.lint([REPO / "evaluators", REPO / "benchmarks"])
    assert json.loads(render_json(found)) == snapshot


def test_example_prompts_have_no_errors() -> None:
    linter = Linter(load_settings(REPO), base=REPO)
    prompts = sorted(Path(REPO / "evaluators").rglob("*_prompt.md"))
    assert prompts
    assert [d.render() for p in prompts for d in linter.lint_file(p)] == []
