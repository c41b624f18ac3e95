"""A benchmark's ``task:`` built once at collection: a Python callable or a model task, the
run's task options filling in or replacing what the benchmark names, and every mistake a
``SpecError`` at the task's line."""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_llmjudge.suite.errors import SpecError
from pytest_llmjudge.suite.files import Benchmark, load_benchmark
from pytest_llmjudge.tasks.build import BuiltTask, TaskOptions, build_task, task_requests
from pytest_llmjudge.tasks.model_task import ModelTask
from pytest_llmjudge.tasks.python_task import PythonTask

PROMPT = """\
messages:
  - role: system
    content: You extract medications.
  - role: user
    content: "Narrative: {{ source_narrative }}"
client_parameters: {temperature: 0, max_tokens: 50}
"""
SCHEMA = '{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}'
CASES = """\
cases:
  - {id: shown, source_narrative: "Pt given aspirin", ground_truth: {answer: aspirin}}
  - {id: asked, source_narrative: "Pt given heparin"}
"""
HEAD = """\
code: M1
concept: The answer names the drug.
inclusion_criteria: Apply when there is output. Flag if it is wrong.
threshold: 0.5
"""


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield


def labels(model: str, base_url: str | None) -> str:
    return model if base_url is None else f"{model}@{base_url}"


def benchmark(root: Path, task: str, extra: str = "", cases: str = CASES) -> Benchmark:
    (root / "prompts").mkdir(exist_ok=True)
    (root / "prompts/extract.yaml").write_text(PROMPT)
    (root / "schemas").mkdir(exist_ok=True)
    (root / "schemas/answer.json").write_text(SCHEMA)
    path = root / "benchmarks/M1.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEAD + textwrap.dedent(task) + extra + cases)
    return load_benchmark(path, "benchmarks/M1.yaml", root)


MODEL_TASK = """\
task:
  model: openai:release-1
  base_url: http://candidate/v1
  prompt_file: prompts/extract.yaml
  settings: {temperature: 0.5}
"""


def build(
    root: Path, bench: Benchmark, options: TaskOptions | None = None, label_of: Any = labels
) -> BuiltTask:
    built = build_task(bench, root, options or TaskOptions(), label_of)
    assert built is not None
    return built


def error(root: Path, bench: Benchmark, options: TaskOptions | None = None, label_of: Any = labels) -> str:
    with pytest.raises(SpecError) as caught:
        build_task(bench, root, options or TaskOptions(), label_of)
    return str(caught.value)


# -- which task ------------------------------------------------------------------------------------


def test_a_benchmark_without_a_task_and_a_run_without_one_has_none(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, "")
    assert build_task(bench, tmp_path, TaskOptions(), labels) is None
    assert task_requests(bench, None) == {}


def write_app(root: Path) -> str:
    package = f"app_{uuid.uuid4().hex[:12]}"
    (root / package).mkdir()
    (root / package / "__init__.py").write_text("")
    (root / package / "produce.py").write_text(
        "def run(case):\n    return 'own'\n\ndef other(case):\n    return 'run'\n"
    )
    return package


def test_the_benchmarks_own_python_task_wins_over_the_runs(tmp_path: Path) -> None:
    package = write_app(tmp_path)
    bench = benchmark(
        tmp_path, f"task: {package}.produce:run\ntask_version: '3'\ntask_sees_ground_truth: true\n"
    )
    built = build(tmp_path, bench, TaskOptions(task=f"{package}.produce:other", model="openai:x"))
    assert isinstance(built.task, PythonTask)
    assert built.task.label == f"{package}.produce:run@3" and built.task.sees_ground_truth
    assert built.model is None and built.base_url is None
    assert task_requests(bench, built) == {}  # a Python task sends no prompt


def test_the_runs_python_task_serves_a_benchmark_without_its_own(tmp_path: Path) -> None:
    package = write_app(tmp_path)
    bench = benchmark(tmp_path, "task_version: '2'\n")
    built = build(tmp_path, bench, TaskOptions(task=f"{package}.produce:other"))
    assert isinstance(built.task, PythonTask) and built.task.label == f"{package}.produce:other@2"
    assert not built.task.sees_ground_truth


def test_a_python_task_that_does_not_import_is_an_error_at_the_task_line(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, "task: not_a_module_q.x:run\n")
    assert error(tmp_path, bench).startswith("benchmarks/M1.yaml:5:1: task: cannot import 'not_a_module_q.x'")


# -- a model task ----------------------------------------------------------------------------------


def test_a_model_task_is_built_with_its_model_url_settings_and_template(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK, "task_version: '4'\ntask_sees_ground_truth: true\n")
    built = build(tmp_path, bench)
    task = built.task
    assert isinstance(task, ModelTask)
    assert (built.model, built.base_url) == ("openai:release-1", "http://candidate/v1")
    assert task.label == "openai:release-1@http://candidate/v1"
    assert task.model_settings() == {"temperature": 0.5, "max_tokens": 50}  # settings over the file's
    assert task.template.display == "prompts/extract.yaml"
    assert task.output_schema is None and task.few_shot is None and task.pool == ()
    assert task.sees_ground_truth and task.version == "4"


def test_the_run_wide_task_model_replaces_the_model_and_its_url(tmp_path: Path) -> None:
    built = build(tmp_path, benchmark(tmp_path, MODEL_TASK), TaskOptions(model="openai:candidate-2"))
    assert (built.model, built.base_url) == ("openai:candidate-2", None)
    assert built.task.label == "openai:candidate-2"


def test_the_run_wide_task_model_and_url_replace_both(tmp_path: Path) -> None:
    options = TaskOptions(model="openai:candidate-2", base_url="http://ci/v1")
    built = build(tmp_path, benchmark(tmp_path, MODEL_TASK), options)
    assert (built.model, built.base_url) == ("openai:candidate-2", "http://ci/v1")


def test_the_run_wide_url_alone_serves_the_tasks_own_model(tmp_path: Path) -> None:
    built = build(tmp_path, benchmark(tmp_path, MODEL_TASK), TaskOptions(base_url="http://ci/v1"))
    assert (built.model, built.base_url) == ("openai:release-1", "http://ci/v1")
    assert built.task.label == "openai:release-1@http://ci/v1"


def test_a_changed_temperature_is_another_fingerprint(tmp_path: Path) -> None:
    first = build(tmp_path, benchmark(tmp_path, MODEL_TASK)).task.fingerprint
    again = build(tmp_path, benchmark(tmp_path, MODEL_TASK)).task.fingerprint
    hotter = build(tmp_path, benchmark(tmp_path, MODEL_TASK.replace("0.5", "1"))).task.fingerprint
    assert first == again and hotter != first


def test_a_model_task_without_a_model_is_an_error_unless_the_run_names_one(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK.replace("  model: openai:release-1\n", ""))
    assert error(tmp_path, bench) == (
        "benchmarks/M1.yaml:5:1: task.model: the model task names no model\n"
        "  hint: add 'model:' to the task, or pass --llmjudge-task-model MODEL"
    )
    built = build(tmp_path, bench, TaskOptions(model="openai:candidate-2"))
    assert built.model == "openai:candidate-2"


def test_a_model_the_judges_labels_cannot_name_is_an_error_at_the_task(tmp_path: Path) -> None:
    def refuses(model: str, base_url: str | None) -> str:
        raise ValueError(f"unknown provider in {model!r}")

    assert error(tmp_path, benchmark(tmp_path, MODEL_TASK), label_of=refuses) == (
        "benchmarks/M1.yaml:5:1: task.model: unknown provider in 'openai:release-1'\n"
        "  hint: use a model string as for the judge"
    )


def test_a_missing_prompt_file_is_an_error_naming_it(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK.replace("prompts/extract.yaml", "prompts/missing.yaml"))
    message = error(tmp_path, bench)
    assert message.startswith("benchmarks/M1.yaml:5:1: task.prompt_file: prompt file ")
    assert "prompts/missing.yaml" in message


def test_a_prompt_file_outside_the_root_is_refused_unless_allowed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "outside.yaml").write_text(PROMPT)
    bench = benchmark(root, MODEL_TASK.replace("prompts/extract.yaml", "../outside.yaml"))
    assert error(root, bench).startswith(
        "benchmarks/M1.yaml:5:1: task.prompt_file: '../outside.yaml' is outside the repository root"
    )
    built = build(root, bench, TaskOptions(allow_outside_root=True))
    assert isinstance(built.task, ModelTask) and built.task.template.display == "../outside.yaml"


def test_an_output_schema_is_kept_as_canonical_json(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK + "  output_schema: schemas/answer.json\n")
    task = build(tmp_path, bench).task
    assert isinstance(task, ModelTask) and task.output_schema is not None
    assert json.loads(task.output_schema) == json.loads(SCHEMA)
    assert task.output_schema == json.dumps(json.loads(SCHEMA), sort_keys=True, separators=(",", ":"))


def test_a_schema_without_a_type_describes_an_object(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK + "  output_schema: schemas/answer.json\n")
    (tmp_path / "schemas/answer.json").write_text('{"properties": {}}')
    task = build_task(bench, tmp_path, TaskOptions(), labels)
    assert (
        task is not None
        and isinstance(task.task, ModelTask)
        and task.task.output_schema == '{"properties":{}}'
    )


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("{not json", "schemas/answer.json: not a JSON schema (Expecting property name", "write JSON"),
        (
            '{"type": "string"}',
            "schemas/answer.json: the schema of an answer must describe an object",
            'start it with {"type": "object", "properties": {...}}',
        ),
        (
            '["type", "object"]',
            "schemas/answer.json: the schema of an answer must describe an object",
            'start it with {"type": "object", "properties": {...}}',
        ),
    ],
)
def test_a_schema_that_cannot_be_used_is_an_error_saying_why(
    tmp_path: Path, text: str, message: str, hint: str
) -> None:
    bench = benchmark(tmp_path, MODEL_TASK + "  output_schema: schemas/answer.json\n")
    (tmp_path / "schemas/answer.json").write_text(text)
    found = error(tmp_path, bench)
    assert found.startswith(f"benchmarks/M1.yaml:5:1: task.output_schema: {message}")
    assert found.endswith(f"\n  hint: {hint}")


def test_a_schema_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK + "  output_schema: schemas/answer.json\n")
    (tmp_path / "schemas/answer.json").write_bytes(b'{"type": "\xff"}')
    assert "task.output_schema: schemas/answer.json: not a JSON schema (" in error(tmp_path, bench)


def test_a_missing_schema_file_is_an_error_naming_it(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK + "  output_schema: schemas/nothing.json\n")
    message = error(tmp_path, bench)
    assert message.startswith(
        "benchmarks/M1.yaml:5:1: task.output_schema: output schema 'schemas/nothing.json'"
    )


# -- few-shot examples -----------------------------------------------------------------------------


def test_few_shot_examples_come_from_the_benchmarks_labelled_cases(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK + "  few_shot: {n_shots: 1, seed: 7}\n")
    task = build(tmp_path, bench).task
    assert isinstance(task, ModelTask) and task.few_shot is not None and task.few_shot.shots == 1
    assert [example.id for example in task.pool] == ["shown"]
    assert task.pool[0].fields["benchmark"] == "M1"  # an example shows its benchmark as the case does
    assert task_requests(bench, build(tmp_path, bench))["task request asked"] == (
        "[system]\nYou extract medications.\n\n"
        "[user]\nNarrative: Pt given aspirin\n\n"
        '[assistant]\n{"answer":"aspirin"}\n\n'
        "[user]\nNarrative: Pt given heparin"
    )


def test_few_shot_examples_come_from_the_examples_file_when_it_is_named(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples/shots.jsonl").write_text(
        '{"id": "ex-insulin", "source_narrative": "Pt given insulin", '
        '"ground_truth": {"answer": "insulin"}}\n'
    )
    bench = benchmark(
        tmp_path, MODEL_TASK + "  few_shot: {n_shots: 1, seed: 7, examples_file: examples/shots.jsonl}\n"
    )
    task = build(tmp_path, bench).task
    assert isinstance(task, ModelTask) and [example.id for example in task.pool] == ["ex-insulin"]
    assert (
        "[user]\nNarrative: Pt given insulin"
        in task_requests(bench, build(tmp_path, bench))["task request shown"]
    )


def test_an_examples_file_outside_the_root_is_refused_unless_allowed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "shots.jsonl").write_text('{"id": "ex", "source_narrative": "x", "ground_truth": "y"}\n')
    bench = benchmark(root, MODEL_TASK + "  few_shot: {n_shots: 1, examples_file: ../shots.jsonl}\n")
    message = error(root, bench)
    assert message.startswith(
        "benchmarks/M1.yaml:5:1: task.few_shot.examples_file: '../shots.jsonl' is outside the repository root"
    )
    task = build(root, bench, TaskOptions(allow_outside_root=True)).task
    assert isinstance(task, ModelTask) and [example.id for example in task.pool] == ["ex"]


def test_a_few_shot_rule_that_disagrees_with_itself_is_an_error(tmp_path: Path) -> None:
    from pytest_llmjudge.tasks.few_shot import FewShotError

    bench = benchmark(tmp_path, MODEL_TASK + "  few_shot: {n_shots: 3, compose: {pass: 1}}\n")
    with pytest.raises(FewShotError, match="n_shots is 3 but the per-class counts of compose add up to 1"):
        build_task(bench, tmp_path, TaskOptions(), labels)


# -- the requests a model task sends ---------------------------------------------------------------


def test_the_requests_are_rendered_with_the_benchmarks_code(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK, cases="cases:\n  - {id: c0, source_narrative: a}\n")
    (tmp_path / "prompts/extract.yaml").write_text("prompt:\n  template: '{{ benchmark }}/{{ id }}'\n")
    assert task_requests(bench, build(tmp_path, bench)) == {"task request c0": "[user]\nM1/c0"}


def test_the_requests_name_each_case_and_show_why_one_cannot_be_rendered(tmp_path: Path) -> None:
    bench = benchmark(tmp_path, MODEL_TASK, cases="cases:\n  - {id: c0, source_narrative: a}\n  - {id: c1}\n")
    assert task_requests(bench, build(tmp_path, bench)) == {
        "task request c0": "[system]\nYou extract medications.\n\n[user]\nNarrative: a",
        "task request c1": "cannot render: template variable 'source_narrative' is not a field of the case "
        "(it has: benchmark, id, inputs)",
    }
