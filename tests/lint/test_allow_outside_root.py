"""`llmjudge lint` reads files outside the root exactly when a pytest run would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROMPT = """SYSTEM
You are a judge.

BEHAVIOR
The output is right.

RUBRIC
Automatic fail if any of the following are true:
- The output is wrong.
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "benchmarks").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "judge_prompt.md").write_text(PROMPT)
    (root / "benchmarks" / "B1.yaml").write_text(
        "code: B1\nconcept: x\nllm_prompt_file: ../outside/judge_prompt.md\n"
    )
    (root / "pytest.ini").write_text("[pytest]\n")
    return root


def lint(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LLMJUDGE_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge.cli.main", "lint", "--select", "LJ000", "benchmarks"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**environment, **env},
        check=False,
    )


def test_a_file_outside_the_root_is_an_error_by_default(repo: Path) -> None:
    done = lint(repo)
    assert done.returncode == 1 and "outside" in done.stdout


def test_the_environment_allows_it_as_for_a_run(repo: Path) -> None:
    done = lint(repo, LLMJUDGE_ALLOW_OUTSIDE_ROOT="1")
    assert done.returncode == 0, done.stdout


def test_the_ini_file_allows_it_as_for_a_run(repo: Path) -> None:
    (repo / "pytest.ini").write_text("[pytest]\nllmjudge_allow_outside_root = true\n")
    done = lint(repo)
    assert done.returncode == 0, done.stdout
