"""examples/ci/llmjudge.yml: the GitHub Actions example runs only real commands and options.

Each ``llmjudge`` command is parsed by the command's own argparse parser; each ``--llmjudge-…``
option of a ``pytest`` command is one ``pytest --help`` lists, with a value it names.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_llmjudge.cli.main import build_parser

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ci" / "llmjudge.yml"
PYTEST_SPLIT = {"--splits", "--group"}  # pytest-split's options, installed by the example


def workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    return loaded


def commands() -> list[list[str]]:
    """Every command line the workflow's ``run:`` steps run, as argv (``|| true`` dropped)."""
    found = []
    for job in workflow()["jobs"].values():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                words = shlex.split(line.split("||")[0].replace("${{ matrix.shard }}", "1"))
                if words:
                    found.append(words)
    return found


@cache
def pytest_help() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        check=True,
        cwd=EXAMPLE.parent,
    )
    return done.stdout


def test_every_llmjudge_command_of_the_example_is_one_the_command_accepts() -> None:
    run = [words for words in commands() if words[0] == "llmjudge"]
    assert {words[1] for words in run} >= {"merge", "cache"}
    for words in run:
        try:
            args = build_parser().parse_args(words[1:])
        except SystemExit:
            pytest.fail(f"llmjudge refuses: {shlex.join(words)}")
        assert callable(args.handler)


def test_every_llmjudge_option_of_a_pytest_command_is_a_real_one() -> None:
    run = [words for words in commands() if words[0] == "pytest"]
    options = [word for words in run for word in words if word.startswith("--")]
    assert "--llmjudge-batch=submit" in options and "--llmjudge-batch=collect" in options
    listed = pytest_help()
    for option in options:
        name, _, value = option.partition("=")
        if name in PYTEST_SPLIT:
            continue
        assert f"{name}=" in listed or f"{name} " in listed, f"pytest --help lists no {name}"
        if value and not value.endswith(".json"):
            assert value in listed, f"pytest --help names no value {value!r} for {name}"


def test_shards_merge_into_one_gate_with_a_cache_keyed_on_the_suite() -> None:
    jobs = workflow()["jobs"]
    assert len(jobs["shard"]["strategy"]["matrix"]["shard"]) >= 2
    assert jobs["gate"]["needs"] == "shard"
    steps = [step for job in jobs.values() for step in job["steps"]]
    keys = [str(s["with"]["key"]) for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
    assert keys and all("hashFiles('benchmarks/**', 'evaluators/**')" in key for key in keys[:1])
    gate = [shlex.split(str(s.get("run", ""))) for s in jobs["gate"]["steps"] if s.get("run")]
    assert gate[1][:2] == ["llmjudge", "merge"] and "-o" in gate[1]
