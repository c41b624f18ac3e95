"""A benchmark's task, built once at collection: a ``SpecError`` at its line when it cannot be."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..suite.errors import Location, SpecError
from ..suite.files import Benchmark, load_cases
from ..suite.reading import check_regular_file, resolve_in_root
from ..suite.task_spec import ModelTaskSpec
from .few_shot import Example, FewShotConfig, example_pool
from .model_task import ModelTask, messages_text, settings_json
from .prompt_template import load_prompt_template
from .python_task import PythonTask, load_python_task

Task = PythonTask | ModelTask


@dataclass(frozen=True)
class TaskOptions:
    """The run's task options: ``--llmjudge-task``, ``--llmjudge-task-model`` and
    ``--llmjudge-task-base-url`` (each replaces the model tasks' own, also the one alone)."""

    task: str | None = None
    model: str | None = None
    base_url: str | None = None
    allow_outside_root: bool = False


@dataclass(frozen=True)
class BuiltTask:
    task: Task
    model: str | None = None  # a model task's model string and base URL, built into a model later
    base_url: str | None = None


def build_task(
    benchmark: Benchmark, rootdir: Path, options: TaskOptions, label_of: Callable[[str, str | None], str]
) -> BuiltTask | None:
    """The benchmark's own ``task:``, else the run's ``--llmjudge-task``; None when neither is set.
    ``label_of(model, base_url)`` names a model as the judge's labels do (no credentials)."""
    spec = benchmark.spec
    where = benchmark.task_location or benchmark.location
    version = spec.task_version
    if spec.task is None and options.task is None:
        return None
    if spec.task is None or isinstance(spec.task, str):
        path = spec.task if isinstance(spec.task, str) else options.task
        assert path is not None
        return BuiltTask(load_python_task(path, version, rootdir, where, spec.task_sees_ground_truth))
    return _model_task(benchmark, spec.task, rootdir, options, label_of, where)


def _model_task(
    benchmark: Benchmark,
    spec: ModelTaskSpec,
    rootdir: Path,
    options: TaskOptions,
    label_of: Callable[[str, str | None], str],
    where: Location,
) -> BuiltTask:
    model = options.model or spec.model
    # --llmjudge-task-base-url serves every model task, also under its own model name (the
    # candidate's server in CI); --llmjudge-task-model alone is a model of its provider's own URL
    base_url = options.base_url if options.base_url is not None or options.model else spec.base_url
    if model is None:
        raise SpecError(
            where,
            "task.model",
            "the model task names no model",
            "add 'model:' to the task, or pass --llmjudge-task-model MODEL",
        )
    template_path = _file(spec.prompt_file, "task.prompt_file", rootdir, where, options)
    template = load_prompt_template(template_path, spec.prompt_file)
    schema = None
    if spec.output_schema is not None:
        schema_path = _file(spec.output_schema, "task.output_schema", rootdir, where, options)
        schema = _schema(schema_path, spec.output_schema, where)
    few_shot = FewShotConfig.from_spec(spec.few_shot) if spec.few_shot is not None else None
    pool: tuple[Example, ...] = ()
    if spec.few_shot is not None:
        source = benchmark.cases
        if spec.few_shot.examples_file is not None:
            source = tuple(
                load_cases(
                    spec.few_shot.examples_file,
                    where,
                    rootdir,
                    options.allow_outside_root,
                    "task.few_shot.examples_file",
                )
            )
        pool = example_pool(benchmark.code, source)
    try:
        label = label_of(model, base_url)
    except Exception as exc:  # ModelConfigError: a local spec or base URL that cannot be used
        raise SpecError(where, "task.model", str(exc), "use a model string as for the judge") from None
    task = ModelTask(
        label,
        settings_json(dict(template.client_parameters), spec.settings),
        template,
        schema,
        few_shot,
        pool,
        benchmark.spec.task_sees_ground_truth,
        benchmark.spec.task_version,
    )
    return BuiltTask(task, model, base_url)


def _file(relative: str, field: str, rootdir: Path, where: Location, options: TaskOptions) -> Path:
    path = resolve_in_root(relative, rootdir, at=where, field=field, allow_outside=options.allow_outside_root)
    check_regular_file(path, relative, label=field.split(".")[-1].replace("_", " "), at=where, field=field)
    return path


def _schema(path: Path, display: str, where: Location) -> str:
    from ..suite.hashing import canonical_json

    try:
        schema: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SpecError(
            where, "task.output_schema", f"{display}: not a JSON schema ({exc})", "write JSON"
        ) from None
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise SpecError(
            where,
            "task.output_schema",
            f"{display}: the schema of an answer must describe an object",
            'start it with {"type": "object", "properties": {...}}',
        )
    return canonical_json(schema)


def task_requests(benchmark: Benchmark, built: BuiltTask | None) -> dict[str, str]:
    """What a model task sends for each case, as the ``::prompt`` snapshot keeps it (system,
    template and few-shot examples rendered); a case it cannot render shows why."""
    if built is None or not isinstance(built.task, ModelTask):
        return {}
    texts = {}
    for case in benchmark.cases:
        try:
            text = messages_text(built.task.request(benchmark.code, case).messages)
        except Exception as exc:  # TemplateFieldError, FewShotError: the case's ERROR in a run
            text = f"cannot render: {exc}"
        texts[f"task request {case.id}"] = text
    return texts
