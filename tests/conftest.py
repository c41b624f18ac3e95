"""Shared fixtures: a benchmark project inside ``pytester`` with an offline fake judge."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy  # noqa: F401
import pydantic_ai.models
import pytest
import scipy.stats  # noqa: F401
import statsmodels.stats.proportion  # noqa: F401
import yaml  # noqa: F401

# Imported here, once: pytester's in-process runs unload the modules first imported inside
# them, and a re-imported ``yaml`` would no longer recognise the nodes of libyaml's C loader
# (a C extension is never re-imported), so the second run recursed forever in yamlsrc. numpy
# refuses a second import in one process outright; scipy and statsmodels bring it in with them
# when a run computes a baseline comparison or a calibration.

# No test may reach a real model provider.
pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(autouse=True)
def _not_an_xdist_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs inside pytester are top-level runs, also when this suite itself runs under xdist."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs inside pytester record new snapshots as on a laptop, also when this suite runs in CI
    (CI=true); a test about CI sets the variable itself."""
    monkeypatch.delenv("CI", raising=False)


# A judge for pytester projects: a case passes unless its candidate output contains "FAIL".
# Every call is appended to judge_calls.log, so tests can tell whether a judge was needed.
JUDGE_CONFTEST = """
import json
import re
from pathlib import Path

import pydantic_ai.models
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import FunctionModel

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
CALLS = Path(__file__).parent / "judge_calls.log"


def judge(messages, info):
    prompt = "".join(
        p.content for m in messages for p in m.parts if isinstance(getattr(p, "content", None), str)
    )
    output = re.search(r"<Output>\\n(.*?)\\n</Output>", prompt, re.S).group(1)
    passed = "FAIL" not in output
    with CALLS.open("a") as log:
        log.write(output + "\\n")
    args = {"pass": passed, "reason": "the candidate output " + ("matches" if passed else "is marked FAIL")}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def pytest_llmjudge_model(config):
    return FunctionModel(judge, model_name="fake-judge")
"""

# A small valid benchmark (rubric from its fields, one passing case).
GOOD = """\
# A-OK1: a benchmark that always loads.
code: A-OK1
label: Always fine
concept: The output says hello.
weight: 0.5
threshold: 1.0
inclusion_criteria: Apply when there is output. Flag if it does not say hello.
cases:
  - id: says-hello
    candidate_output: hello
"""


@dataclass
class Suite:
    """A benchmark repository in a pytester directory (which is pytest's rootdir)."""

    pytester: pytest.Pytester

    @property
    def root(self) -> Path:
        return self.pytester.path

    def write(self, relative: str, content: str | bytes, dedent: bool = True) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content) if dedent else content, encoding="utf-8")
        return path

    def benchmark(self, code: str, content: str, folder: str = "benchmarks/a") -> Path:
        return self.write(f"{folder}/{code}.yaml", content)

    def run(self, *args: str, syrupy: bool = False, cache: bool = False) -> pytest.RunResult:
        """Run pytest in-process; syrupy and pytest's cache are off unless a test is about them."""
        options = ["--color=no"]
        if not syrupy:
            options += ["-p", "no:syrupy"]
        if not cache:
            options += ["-p", "no:cacheprovider"]
        return self.pytester.runpytest(*options, *args)

    def judge_calls(self) -> list[str]:
        log = self.root / "judge_calls.log"
        return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Suite:
    """An empty repository with a rootdir ini and the fake judge hook."""
    pytester.makeini("[pytest]\n")
    pytester.makeconftest(JUDGE_CONFTEST)
    return Suite(pytester)


@pytest.fixture
def bare_suite(pytester: pytest.Pytester) -> Suite:
    """A repository with no judge configured at all."""
    pytester.makeini("[pytest]\n")
    return Suite(pytester)
