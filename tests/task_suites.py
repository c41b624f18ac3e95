"""Suites whose cases get their outputs from a task, for the task-step tests: a Python task that
logs its calls (``write_task_suite``), and model tasks that call the loopback fake OpenAI server
(``serve_model_tasks``, ``model_task_benchmark``); and what the tests read back of a run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import JUDGE_CONFTEST, Suite

TASK_BENCHMARK = """\
code: T1
concept: The output repeats the narrative.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
task: app.produce:run
task_version: "{version}"
cases:
  - {{id: c0, source_narrative: alpha}}
  - {{id: c1, source_narrative: beta}}
  - {{id: c2, source_narrative: gamma}}
"""

# The system under test: logs each call, and raises for the narrative "boom".
APP = """\
from pathlib import Path

CALLS = Path(__file__).parent.parent / "task_calls.log"
SUFFIX = "{suffix}"


def run(case):
    with CALLS.open("a") as log:
        log.write(case.id + "\\n")
    if case.source_narrative == "boom":
        raise ValueError("the product broke")
    return {{"echo": case.source_narrative + SUFFIX, "saw_truth": case.ground_truth}}
"""


def write_task_suite(suite: Suite, version: str = "1", suffix: str = "") -> None:
    """Benchmark T1: three cases whose outputs come from the Python task ``app.produce:run``."""
    suite.write("app/__init__.py", "")
    suite.write("app/produce.py", APP.format(suffix=suffix))
    suite.benchmark("T1", TASK_BENCHMARK.format(version=version))


def task_calls(suite: Suite) -> list[str]:
    """The ids of the cases the Python task was called for, in order."""
    log = suite.root / "task_calls.log"
    return log.read_text().splitlines() if log.exists() else []


def results(suite: Suite, name: str = "r.json") -> dict[str, Any]:
    return json.loads((suite.root / name).read_text())  # type: ignore[no-any-return]


def cases_of(data: dict[str, Any], code: str) -> dict[str, dict[str, Any]]:
    """Benchmark ``code``'s cases in a results file, by id."""
    (bench,) = [b for b in data["benchmarks"] if b["code"] == code]
    return {c["id"]: c for c in bench["cases"]}


def serve_model_tasks(suite: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """Let model tasks call the loopback fake server (the only model a test reaches); the judge
    stays conftest's offline FunctionModel."""
    import pydantic_ai.models

    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", True)  # the fake server only
    suite.pytester.makeconftest(JUDGE_CONFTEST.replace("pydantic_ai.models.ALLOW_MODEL_REQUESTS = False", ""))


def model_task_benchmark(code: str, url: str, prompt_file: str, cases: str, task_extra: str = "") -> str:
    """A benchmark whose task is the model ``openai:release-1`` at ``url`` (the fake server), its
    request rendered from ``prompt_file``; ``task_extra`` adds lines to ``task:`` (indented by
    two), ``cases`` are the lines under ``cases:``."""
    return (
        f"code: {code}\n"
        "concept: The answer names the narrative.\n"
        "inclusion_criteria: Apply when there is output. Flag if it is wrong.\n"
        "threshold: 0.5\n"
        "task:\n"
        "  model: openai:release-1\n"
        f"  base_url: {url}/v1\n"
        f"  prompt_file: {prompt_file}\n"
        f"{task_extra}"
        "cases:\n"
        f"{cases}"
    )


# Benchmark M1: a model task with a system prompt, an output schema and a few-shot example.
_EXTRACT_CASES = """\
  - {id: shown, source_narrative: "Pt given aspirin", ground_truth: {answer: aspirin}}
  - {id: asked, source_narrative: "Pt given heparin", inputs: {scenario: ward}}
"""
_EXTRACT_TASK = """\
  output_schema: schemas/answer.json
  settings: {temperature: 0}
  few_shot: {n_shots: 1, seed: 7}
"""

EXTRACT_PROMPT = """\
messages:
  - role: system
    content: You extract medications.
  - role: user
    content: "Narrative: {{ source_narrative }}"
template_variables: [source_narrative]
"""

_EXTRACT_SCHEMA = '{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}'


def write_model_suite(suite: Suite, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Benchmark M1: its model task calls the server at ``url`` with a system prompt, an output
    schema and one few-shot example; the judge stays the offline FunctionModel."""
    serve_model_tasks(suite, monkeypatch)
    suite.write("prompts/extract.yaml", EXTRACT_PROMPT)
    suite.write("schemas/answer.json", _EXTRACT_SCHEMA)
    suite.benchmark(
        "M1", model_task_benchmark("M1", url, "prompts/extract.yaml", _EXTRACT_CASES, _EXTRACT_TASK)
    )
