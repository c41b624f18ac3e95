"""``pytest --llmjudge-lint`` glue: a lint item per prompt, benchmark and template file."""

from __future__ import annotations

import pytest

from tests.lint.conftest import CORPUS

CONFTEST = """
from pytest_llmjudge.glue.lint_items import LintPlugin

def pytest_configure(config):
    config.pluginmanager.register(LintPlugin(), "llmjudge-lint")
"""


@pytest.fixture
def lint_project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyprojecttoml('[tool.llmjudge.lint]\nselect = ["LJ001", "LJ03"]\n')
    (pytester.path / "evaluators").mkdir()
    (pytester.path / "benchmarks").mkdir()
    for name in ("flag_spec_wrong_example_prompt.md", "ok_spec_independent_example_prompt.md"):
        (pytester.path / "evaluators" / name).write_bytes((CORPUS / "logic" / name).read_bytes())
    (pytester.path / "benchmarks" / "B-1.yaml").write_text(
        "code: B-1\nevaluator_type: llm_judge\n"
        "llm_prompt_file: evaluators/ok_spec_independent_example_prompt.md\n",
        encoding="utf-8",
    )
    (pytester.path / "benchmarks" / "notes.yaml").write_text("owners: [a]\n", encoding="utf-8")
    return pytester


def test_one_item_per_file_failing_on_errors_without_traceback(lint_project: pytest.Pytester) -> None:
    result = lint_project.runpytest("-p", "no:llmjudge", "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "evaluators/flag_spec_wrong_example_prompt.md:1:1: LJ032 no benchmark names this prompt file*",
            "evaluators/flag_spec_wrong_example_prompt.md:3:1: LJ001 bullets on lines 3, 4, 5 *",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "raise LintFailure" not in result.stdout.str()


def test_item_ids_and_skipped_files(lint_project: pytest.Pytester) -> None:
    result = lint_project.runpytest("-p", "no:llmjudge", "--collect-only", "-q")
    ids = [line for line in result.stdout.lines if "::" in line]
    assert sorted(ids) == [
        "benchmarks/B-1.yaml::llmjudge-lint",
        "evaluators/flag_spec_wrong_example_prompt.md::llmjudge-lint",
        "evaluators/ok_spec_independent_example_prompt.md::llmjudge-lint",
    ]


def test_bad_settings_are_a_usage_error(lint_project: pytest.Pytester) -> None:
    lint_project.makepyprojecttoml('[tool.llmjudge.lint]\nselect = ["LJ9"]\n')
    result = lint_project.runpytest("-p", "no:llmjudge", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--llmjudge-lint: 'LJ9' matches no rule*"])
