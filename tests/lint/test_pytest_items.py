"""``pytest --llmjudge-lint`` glue: a lint item per prompt, benchmark and template file."""

from __future__ import annotations

import pytest

from tests.conftest import Suite
from tests.lint.conftest import CORPUS, REPO

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


# -- prompt files of the collected benchmarks, and turning linting on ------------------------

PROMPT = (REPO / "evaluators" / "llm-judge" / "medications_extracted_prompt.md").read_text(encoding="utf-8")
# Lint errors: missing sections, an AND condition split across bullets, an empty section.
BROKEN_PROMPT = """\
SYSTEM: You are an evaluator.

BEHAVIOR: allergies_recorded

RUBRIC

Automatic fail if any of the following are true:
- Field is blank/null in the output.
- Narrative does not contain this information.
- Output provides no acknowledgment of the gap.

Pass conditions (all must be satisfied):
"""


def benchmark_using(code: str, prompt: str) -> str:
    return (
        f"code: {code}\nlabel: {code}\nconcept: The output is right.\nevaluator_type: llm_judge\n"
        f"inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        f"llm_prompt_file: evaluators/llm-judge/{prompt}\n"
    )


@pytest.fixture
def judged(suite: Suite) -> Suite:
    """Two benchmarks sharing a broken prompt in evaluators/, one using a clean prompt."""
    suite.write("evaluators/llm-judge/broken_prompt.md", BROKEN_PROMPT)
    suite.write("evaluators/llm-judge/clean_prompt.md", PROMPT)
    suite.benchmark("B-ONE", benchmark_using("B-ONE", "broken_prompt.md"))
    suite.benchmark("B-TWO", benchmark_using("B-TWO", "broken_prompt.md"))
    suite.benchmark("B-CLEAN", benchmark_using("B-CLEAN", "clean_prompt.md"))
    return suite


def lint_ids(result: pytest.RunResult) -> list[str]:
    return sorted(line for line in result.stdout.lines if line.endswith("::llmjudge-lint"))


def test_prompt_files_used_by_collected_benchmarks_are_linted(judged: Suite) -> None:
    result = judged.run("benchmarks", "--llmjudge-lint", "-rf")
    result.stdout.fnmatch_lines(
        [
            "evaluators/llm-judge/broken_prompt.md:*: LJ001 bullets on lines 8, 9, 10 *",
            "FAILED evaluators/llm-judge/broken_prompt.md::llmjudge-lint*",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=4, failed=1, skipped=3)  # 3 benchmarks, 2 prompts; 3 prompt items


def test_a_prompt_gets_one_lint_item_however_many_benchmarks_or_paths_name_it(judged: Suite) -> None:
    expected = [
        "benchmarks/a/B-CLEAN.yaml::llmjudge-lint",
        "benchmarks/a/B-ONE.yaml::llmjudge-lint",
        "benchmarks/a/B-TWO.yaml::llmjudge-lint",
        "evaluators/llm-judge/broken_prompt.md::llmjudge-lint",
        "evaluators/llm-judge/clean_prompt.md::llmjudge-lint",
    ]
    assert lint_ids(judged.run("benchmarks", "--llmjudge-lint", "--co", "-q")) == expected
    assert lint_ids(judged.run("benchmarks", "evaluators", "--llmjudge-lint", "--co", "-q")) == expected
    only_one = judged.run("benchmarks/a/B-CLEAN.yaml", "--llmjudge-lint", "--co", "-q")
    assert lint_ids(only_one) == [expected[0], expected[4]]


@pytest.mark.parametrize(
    ("ini", "env", "args", "linted"),
    [
        ("", None, [], False),
        ("llmjudge_lint = true", None, [], True),
        ("llmjudge_lint = false", "1", [], True),
        ("llmjudge_lint = true", "0", [], False),
        ("", "yes", [], True),
        ("", "0", ["--llmjudge-lint"], True),
        ("llmjudge_lint = true", "1", ["--no-llmjudge-lint"], False),
    ],
)
def test_lint_from_command_line_environment_or_ini(
    judged: Suite, monkeypatch: pytest.MonkeyPatch, ini: str, env: str | None, args: list[str], linted: bool
) -> None:
    judged.pytester.makeini(f"[pytest]\n{ini}\n")
    if env is None:
        monkeypatch.delenv("LLMJUDGE_LINT", raising=False)
    else:
        monkeypatch.setenv("LLMJUDGE_LINT", env)
    result = judged.run("benchmarks", "--co", "-q", *args)
    assert result.ret == pytest.ExitCode.OK
    assert bool(lint_ids(result)) is linted


def test_unreadable_lint_environment_variable_is_a_usage_error(
    judged: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLMJUDGE_LINT", "sometimes")
    result = judged.run("benchmarks", "--co")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*LLMJUDGE_LINT: cannot read 'sometimes' as a boolean*"])
