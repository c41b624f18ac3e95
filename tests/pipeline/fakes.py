"""In-process doubles for the pipeline's unit tests: benchmark cases as the glue hands them over
(``Item``, ``PairItem``), loaded from YAML written into a temporary project, and judges that are
pydantic-ai ``FunctionModel``s counting their calls (never a network model)."""

from __future__ import annotations

import json
import re
import textwrap
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import pydantic_ai.models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from pytest_llmjudge.compile.pairwise import PairwiseRequest, compile_both_orders
from pytest_llmjudge.compile.request import CompiledRequest, compile_case
from pytest_llmjudge.compile.sections import sections_for
from pytest_llmjudge.gating.panel_outcome import combine_panel
from pytest_llmjudge.gating.repeats import combine_outcomes
from pytest_llmjudge.judging.verdict import Outcome
from pytest_llmjudge.pipeline.host import Baseline
from pytest_llmjudge.pipeline.service import JudgingService
from pytest_llmjudge.suite.files import Benchmark, Case, load_benchmark
from pytest_llmjudge.suite.prompt_file import PromptSections
from pytest_llmjudge.suite.settings import RunSettings
from pytest_llmjudge.tasks.build import BuiltTask
from pytest_llmjudge.tasks.python_task import PythonTask
from pytest_llmjudge.tasks.task_input import TaskInput

pydantic_ai.models.ALLOW_MODEL_REQUESTS = False

HEAD = """\
code: {code}
concept: The output says hello.
threshold: 0.5
inclusion_criteria: Apply when there is output. Flag if it does not say hello.
"""


def _prompt(messages: list[ModelMessage]) -> str:
    texts = (getattr(p, "content", None) for m in messages for p in m.parts)
    return "".join(t for t in texts if isinstance(t, str))


def _answer(info: AgentInfo, args: dict[str, Any], tokens: tuple[int, int]) -> ModelResponse:
    usage = RequestUsage(input_tokens=tokens[0], output_tokens=tokens[1])
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)], usage=usage)
    return ModelResponse(parts=[TextPart(json.dumps(args))], usage=usage)


@dataclass
class Judge:
    """A judge that passes an output unless it contains ``FAIL`` (pairwise: prefers the output
    containing ``BETTER``); each call's output is logged in ``calls``. ``broken`` outputs make it
    raise; ``garbled`` outputs make it answer text that is no verdict."""

    name: str = "fake-judge"
    calls: list[str] = field(default_factory=list)
    tokens: tuple[int, int] = (10, 5)
    broken: tuple[str, ...] = ()
    garbled: tuple[str, ...] = ()
    flip: dict[str, int] = field(default_factory=dict)  # outputs whose verdict alternates
    snapshot: str | None = None  # the model each answer says answered it (a resolved snapshot)
    gate: threading.Event | None = None  # each call waits for it (at most 5 s)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if self.gate is not None:
            self.gate.wait(5)
        prompt = _prompt(messages)
        if "<OutputA>" in prompt:
            a = _block(prompt, "OutputA")
            b = _block(prompt, "OutputB")
            self.calls.append(f"{a} | {b}")
            if any(word in a + b for word in self.broken):
                raise RuntimeError("the judge broke")
            if any(word in a + b for word in self.garbled):
                usage = RequestUsage(input_tokens=self.tokens[0], output_tokens=self.tokens[1])
                return ModelResponse(parts=[TextPart("no verdict here")], usage=usage)
            winner = "tie" if ("BETTER" in a) == ("BETTER" in b) else ("A" if "BETTER" in a else "B")
            if "flip" in a:  # alternates, call by call, for the output shown first
                seen = self.flip[a] = self.flip.get(a, 0) + 1
                winner = "A" if seen % 2 == 1 else "B"
            return _answer(info, {"winner": winner, "reason": f"winner {winner}"}, self.tokens)
        output = _block(prompt, "Output")
        self.calls.append(output)
        if any(word in output for word in self.broken):
            raise RuntimeError("the judge broke")
        if any(word in output for word in self.garbled):
            usage = RequestUsage(input_tokens=self.tokens[0], output_tokens=self.tokens[1])
            return ModelResponse(parts=[TextPart("no verdict here")], usage=usage)
        passed = "FAIL" not in output
        if "flip" in output:
            seen = self.flip[output] = self.flip.get(output, 0) + 1
            passed = seen % 2 == 1
        return _answer(info, {"pass": passed, "reason": "pass" if passed else "fail"}, self.tokens)

    def model(self) -> FunctionModel:
        return _Answering(self, model_name=self.name)


class _Answering(FunctionModel):
    """A FunctionModel whose responses name the judge's ``snapshot`` as the model that answered
    (as a provider names the snapshot its model string resolved to)."""

    async def request(self, *args: Any, **kwargs: Any) -> ModelResponse:
        response = await super().request(*args, **kwargs)
        judge = self.function
        if isinstance(judge, Judge) and judge.snapshot is not None:
            response.model_name = judge.snapshot
        return response


def _block(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    assert found is not None, f"no <{tag}> in the judge request"
    return found.group(1)


@dataclass
class Item:
    """A case as the glue hands it over (``glue.nodes.CaseItem``)."""

    nodeid: str
    benchmark: Benchmark
    case: Case
    request: CompiledRequest
    sections: PromptSections
    task: BuiltTask | None = None

    def recompile(self, case: Case) -> CompiledRequest:
        return compile_case(self.benchmark, self.sections, case)


@dataclass
class PairItem(Item):
    """A pairwise case (``glue.pairwise_items.PairwiseItem``)."""

    baseline: Baseline | None = None
    pairwise_mode: bool = True

    def pair_requests(self, candidate_output: Any) -> tuple[PairwiseRequest, PairwiseRequest]:
        assert self.baseline is not None
        return compile_both_orders(
            self.benchmark, self.sections, self.case, candidate_output, self.baseline.output
        )


@dataclass
class TaskLog:
    """A Python task echoing each case's narrative (``boom`` raises); ``calls`` names each case."""

    calls: list[str] = field(default_factory=list)
    suffix: str = ""

    def __call__(self, case: TaskInput) -> Any:
        self.calls.append(case.id)
        if case.source_narrative == "boom":
            raise ValueError("the product broke")
        return f"{case.source_narrative}{self.suffix}"

    def built(self, version: str = "1") -> BuiltTask:
        return BuiltTask(PythonTask("app.produce:run", version, self))


@dataclass
class Project:
    """A benchmark project in ``root``: write benchmark files, load their cases."""

    root: Path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def load(self, code: str, body: str, head: str = HEAD) -> tuple[Benchmark, PromptSections]:
        relative = f"benchmarks/{code}.yaml"
        path = self.write(relative, head.format(code=code) + textwrap.dedent(body))
        benchmark = load_benchmark(path, relative, self.root)
        return benchmark, sections_for(benchmark, self.root)

    def cases(self, code: str, body: str, task: BuiltTask | None = None, head: str = HEAD) -> list[Item]:
        benchmark, sections = self.load(code, body, head)
        return [
            Item(_nodeid(benchmark, c), benchmark, c, compile_case(benchmark, sections, c), sections, task)
            for c in benchmark.cases
        ]

    def pairs(
        self, code: str, body: str, task: BuiltTask | None = None, head: str = HEAD, mode: bool = True
    ) -> list[PairItem]:
        """A pairwise benchmark's cases (``mode``: its head gets ``judge: {mode: pairwise}``)."""
        benchmark, sections = self.load(code, body, head + "judge: {{mode: pairwise}}\n" if mode else head)
        found = []
        for c in benchmark.cases:
            given = c.spec.baseline_output
            baseline = None if given is None else Baseline(given, "case file")
            request = compile_case(benchmark, sections, c)
            found.append(PairItem(_nodeid(benchmark, c), benchmark, c, request, sections, task, baseline))
        return found


def _nodeid(benchmark: Benchmark, case: Case) -> str:
    return f"benchmarks/{benchmark.code}.yaml::{benchmark.code}::{case.id}"


def service(
    root: Path, judge: Judge | None = None, models: Callable[[], Any] | None = None, **settings: Any
) -> JudgingService:
    """The judging service of a run with ``settings`` whose default judge is ``judge``, the
    repeats and panels combined as the glue combines them."""
    run = RunSettings(**settings)
    default = models if models is not None else (judge.model if judge is not None else lambda: None)
    host = JudgingService(
        run,
        root,
        default,
        combine=partial(combine_outcomes, settings=run),
        combine_panel=partial(combine_panel, settings=run),
    )
    host.spending.open("single")  # the run's budget, if it has one
    return host


def outcomes(host: JudgingService, cases: Sequence[Item]) -> dict[str, Outcome]:
    """Each case's outcome by its case id, scheduled together as a run schedules them."""
    host.schedule(cases)
    return {c.case.id: host.outcome(c) for c in cases}


def passed(outcome: Outcome) -> bool | None:
    """The case's verdict (None: it errored)."""
    return None if outcome.verdict is None else outcome.verdict.passed


def replace_case(item: Item, **update: Any) -> Item:
    return replace(item, case=replace(item.case, spec=item.case.spec.model_copy(update=update)))


def fake_models(monkeypatch: Any, judges: dict[str, Any]) -> None:
    """Model strings ``fake:NAME`` build ``judges[NAME]``'s FunctionModel (a panel member, a
    benchmark's own judge); any other model string cannot be used (``ModelConfigError``)."""
    from pytest_llmjudge.models import models
    from pytest_llmjudge.models.models import ModelConfigError

    def build(value: Any, base_url: str | None = None, **_: Any) -> Any:
        if not isinstance(value, str):
            return value
        name = value.partition(":")[2]
        if not value.startswith("fake:") or name not in judges:
            raise ModelConfigError(f"cannot use judge model {value!r}")
        return judges[name].model()

    monkeypatch.setattr(models, "build_model", build)


PROMPT = """\
messages:
  - role: user
    content: "Narrative: {{ source_narrative }}"
template_variables: [source_narrative]
"""


@dataclass
class TaskModel:
    """A model task's model: answers ``said <narrative>`` (``boom`` raises), with ``tokens`` of
    usage; ``calls`` logs each request's last message."""

    name: str = "task"
    calls: list[str] = field(default_factory=list)
    tokens: tuple[int, int] = (7, 3)
    failure: str | None = None  # the kind of failure every call raises (``batch-pending``, ...)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        from pytest_llmjudge.models.batching import PendingFailure  # a JudgeFailure an agent run passes on

        text = _prompt(messages[-1:])
        self.calls.append(text)
        if self.failure is not None:
            raise PendingFailure(self.failure, "the call failed")
        if "boom" in text:
            raise RuntimeError("the task model broke")
        usage = RequestUsage(input_tokens=self.tokens[0], output_tokens=self.tokens[1])
        said = "said " + text.removeprefix("Narrative: ")
        if info.output_tools:  # the task's output schema: a structured answer
            return ModelResponse(
                parts=[ToolCallPart(info.output_tools[0].name, {"answer": said})], usage=usage
            )
        return ModelResponse(parts=[TextPart(said)], usage=usage)

    async def answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return self(messages, info)

    def model(self) -> FunctionModel:
        return FunctionModel(self.answer, model_name=self.name)


def model_task_cases(
    project: Project, code: str, cases: str, model: str = "fake:task", task_extra: str = ""
) -> list[Item]:
    """Benchmark ``code`` whose outputs come from the model task ``model`` (its prompt renders
    ``Narrative: <source_narrative>``); ``cases`` are the lines under ``cases:``, ``task_extra``
    more lines under ``task:``."""
    from pytest_llmjudge.models.models import judge_label
    from pytest_llmjudge.tasks.build import TaskOptions, build_task

    project.write("prompts/task.yaml", PROMPT)
    task = f"task:\n  model: {model}\n  prompt_file: prompts/task.yaml\n{task_extra}"
    body = task + "cases:\n" + textwrap.dedent(cases)
    benchmark, sections = project.load(code, body)
    built = build_task(benchmark, project.root, TaskOptions(), judge_label)
    assert built is not None
    return [
        Item(_nodeid(benchmark, c), benchmark, c, compile_case(benchmark, sections, c), sections, built)
        for c in benchmark.cases
    ]


def python_task(
    function: Callable[[TaskInput], Any], sees_truth: bool = False, name: str = "app:run"
) -> BuiltTask:
    """``function`` as a benchmark's Python task (labelled ``name@1``)."""
    return BuiltTask(PythonTask(name, "1", function, sees_truth))
