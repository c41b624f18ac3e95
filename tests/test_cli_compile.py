"""`llmjudge compile` shows the request pytest would send: same root, same prompt-style sources."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = """\
code: B1
concept: The output is right.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
cases:
  - {id: c0, source_narrative: n, candidate_output: o}
"""


def compile_in(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_llmjudge.cli.main", "compile", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "B1.yaml").write_text(BENCHMARK)
    return tmp_path


def reasons_in_text(output: str) -> bool:
    return "<reasoning>" in output


def test_the_environment_chooses_the_style_as_in_a_run(repo: Path) -> None:
    assert not reasons_in_text(compile_in(repo, "benchmarks/B1.yaml"))
    env = {**os.environ, "LLMJUDGE_PROMPT_STYLE": "short_cot"}
    assert reasons_in_text(compile_in(repo, "benchmarks/B1.yaml", env=env))


def test_the_ini_file_chooses_the_style_from_a_subfolder(repo: Path) -> None:
    (repo / "pytest.ini").write_text("[pytest]\nllmjudge_prompt_style = short_cot\n")
    assert reasons_in_text(compile_in(repo / "benchmarks", "B1.yaml"))


def test_the_benchmark_style_beats_the_environment(repo: Path) -> None:
    (repo / "benchmarks" / "B1.yaml").write_text(BENCHMARK + "judge: {prompt_style: short_cot}\n")
    env = {**os.environ, "LLMJUDGE_PROMPT_STYLE": "no_reasoning"}
    assert reasons_in_text(compile_in(repo, "benchmarks/B1.yaml", env=env))
