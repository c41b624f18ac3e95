"""``llmjudge lint`` resolves paths from the folder pytest roots at, in every kind of repository.

The subprocess runs are what a user (or pre-commit, which passes file names from the repository
root) does; the pytester run checks that ``pytest --llmjudge-lint`` builds the same settings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_llmjudge.lint.settings import settings_for_root
from pytest_llmjudge.suite.root import find_root
from tests.lint.conftest import REPO

LLMJUDGE = Path(sys.executable).parent / "llmjudge"
PROMPT = (REPO / "evaluators" / "llm-judge" / "medications_extracted_prompt.md").read_text(encoding="utf-8")
BENCHMARK = """\
code: {code}
label: Medications extracted correctly
evaluator_type: llm_judge
inclusion_criteria: Apply when medications were given. Flag if one is missing.
llm_prompt_file: evaluators/llm-judge/medications_extracted_prompt.md
"""
# A rubric file without a 'benchmarks' list: only the rubric folder tells it from a benchmark.
RUBRIC = "code: R\nlabel: Rubric\naggregation_method: MEAN\npassing_threshold: 0.8\n"
SUITES = "[pytest]\nllmjudge_paths = suites\nllmjudge_rubrics = groups\n"
LAYOUTS = {
    "no config": {},
    "pytest.ini": {"pytest.ini": SUITES},
    "tox.ini": {"tox.ini": SUITES},
    "setup.cfg": {"setup.cfg": SUITES.replace("[pytest]", "[tool:pytest]")},
    "pyproject.toml": {
        "pyproject.toml": '[tool.pytest.ini_options]\nllmjudge_paths = ["suites"]\n'
        'llmjudge_rubrics = "groups"\n'
    },
}


def make_repo(root: Path, layout: str) -> tuple[str, str]:
    """A repository with one benchmark, its prompt, an unused prompt and a rubric; returns the
    benchmark and rubric folder names (the ini file renames them)."""
    benchmarks, rubrics = ("benchmarks", "rubrics") if layout == "no config" else ("suites", "groups")
    files = {
        f"{benchmarks}/a/A-MED1.yaml": BENCHMARK.format(code="A-MED1"),
        "evaluators/llm-judge/medications_extracted_prompt.md": PROMPT,
        "evaluators/llm-judge/orphan_prompt.md": PROMPT,
        f"{rubrics}/R.yaml": RUBRIC,
        **LAYOUTS[layout],
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return benchmarks, rubrics


def lint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LLMJUDGE), "lint", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_lint_resolves_prompts_like_pytest(layout: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    benchmarks, rubrics = make_repo(repo, layout)
    runs = [
        (repo, ["evaluators", benchmarks, rubrics]),  # from the root
        (  # as pre-commit passes changed files, from the root
            repo,
            [
                "--force-exclude",
                f"{benchmarks}/a/A-MED1.yaml",
                "evaluators/llm-judge/medications_extracted_prompt.md",
                f"{rubrics}/R.yaml",
            ],
        ),
        (repo / benchmarks, ["../evaluators", "."]),  # from a subfolder
        (repo / benchmarks / "a", ["A-MED1.yaml"]),
    ]
    for cwd, args in runs:
        result = lint(cwd, *args)
        if layout == "no config" and cwd != repo and ".." not in " ".join(args):
            # pytest roots a repository without configuration at the folder it runs in, so
            # `pytest A-MED1.yaml` there cannot find the prompt either: the linter agrees.
            assert "LJ000 llm_prompt_file: prompt file" in result.stdout, result.stdout
            assert result.returncode == 1
            continue
        assert result.returncode == 0, (cwd, args, result.stdout, result.stderr)
        assert "LJ000" not in result.stdout
    # The benchmark folder from the ini file tells LJ032 which benchmarks exist.
    result = lint(repo, "evaluators")
    assert "evaluators/llm-judge/orphan_prompt.md:1:1: LJ032" in result.stdout
    assert "medications_extracted_prompt.md:1:1: LJ032" not in result.stdout


@pytest.mark.parametrize("layout", ["no config", "tox.ini", "pyproject.toml"])
@pytest.mark.parametrize(("folder", "args"), [("", ["suites"]), ("suites", [".."]), ("suites/a", ["../.."])])
def test_pytest_lint_items_and_the_command_share_one_root(
    layout: str, folder: str, args: list[str], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(pytester.path, layout)
    (pytester.path / "suites" / "a").mkdir(parents=True, exist_ok=True)
    pytester.makepyfile(
        dump_settings="""
        import os
        from pathlib import Path

        from pytest_llmjudge.glue.lint_items import LINTER

        def pytest_sessionfinish(session):
            Path(os.environ["DUMP_TO"]).write_text(repr(session.config.stash[LINTER].settings))
        """
    )
    pytester.syspathinsert()
    dump = pytester.path / "settings.txt"
    monkeypatch.setenv("DUMP_TO", str(dump))
    monkeypatch.chdir(pytester.path / folder)
    pytester.runpytest("-p", "dump_settings", "-p", "no:cacheprovider", "--llmjudge-lint", "--co", *args)
    command = settings_for_root(find_root(args, Path(os.getcwd())))
    assert dump.read_text() == repr(command)
