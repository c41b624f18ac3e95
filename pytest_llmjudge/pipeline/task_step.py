"""The task step of a run: produce a case's candidate output before it is judged.

A case whose output the cache holds is settled when it is scheduled, and judged like a case with
a stored output. Otherwise its judge jobs start with the task call (``produce``): the judge call
follows as soon as the output exists, so tasks and judge calls overlap. Each case's task runs
once, whatever its judge repeats; tasks have their own concurrency and timeout. A task that
raises, times out or returns no usable output is the case's ERROR (phase ``task``), never a FAIL.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..judging.verdict import JudgeFailure, Usage
from ..suite.settings import RunSettings
from ..tasks.task_errors import user_frames

if TYPE_CHECKING:
    from ..cost.pricing import Price
    from ..cost.spending import CallBudget, Spending
    from ..cost.tokens import ModelTokens
    from ..execution.scheduler import Slots
    from ..models.answered import Answered
    from ..suite.files import Case
    from ..tasks.build import BuiltTask
    from ..tasks.model_task import TaskRequest
    from ..tasks.output_cache import OutputCache

CASE_FILE, TASK, TASK_CACHE = "case file", "task", "task cache"
# A batched model task's call left waiting in its batch (``models.batching.PENDING``): collected later.
BATCH_PENDING = "batch-pending"


@dataclass(frozen=True)
class Produced:
    """A case's candidate output and where it came from."""

    output: Any
    source: str  # CASE_FILE, TASK or TASK_CACHE
    task: str = ""  # the task's label (import path, or model label)
    fingerprint: str = ""
    latency: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    # cost of the task call made for it in this run (0 from the cache or a Python task, which
    # the plugin does not see calling anything); None: its model has no known price
    cached_input_tokens: int = 0
    cost: Decimal | None = Decimal(0)
    saved: Decimal | None = None  # from the output cache: the stored tokens at today's price
    # the model that answered the model task's call that produced it (resolved snapshot,
    # fingerprint), from the output cache too; None: a Python task, the case file, not recorded
    answered: Answered | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "task": self.task or None,
            "fingerprint": self.fingerprint or None,
            "latency": self.latency,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


class TaskFailed(Exception):
    """A task gave no usable output for a case; ``failure`` says why (phase ``task``)."""

    def __init__(self, failure: JudgeFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


@dataclass(frozen=True)
class Planned:
    """What the task of one case is given, and the cache key of its output."""

    built: BuiltTask
    benchmark: str
    case: Case
    key: str
    request: TaskRequest | None  # a model task's rendered request


@dataclass
class _Billed:
    """What a task call used: its priced usage (none for a Python task: the plugin sees no model
    call), and what its budget settles (None: the projection, when no usage came back)."""

    usage: Usage = field(default_factory=lambda: Usage(cost=Decimal(0)))
    used: Usage | None = None
    answered: Answered | None = None  # the model that answered a model task's call


@dataclass(eq=False)
class TaskStep:
    settings: RunSettings
    root: Path
    model_of: Callable[[str, str | None], Any]  # a pydantic-ai model for a task's model string
    spending: Spending | None = None  # prices and the run's budget
    _cache: OutputCache | None = None
    _cache_opened: bool = False
    _running: dict[str, asyncio.Future[Produced]] = field(default_factory=dict)
    _semaphore: asyncio.Semaphore | None = None
    _prices: dict[str, Price | None] = field(default_factory=dict)
    write_errors: list[str] = field(default_factory=list)

    def needs_task(self, built: BuiltTask | None, case: Case) -> bool:
        return built is not None and (case.spec.candidate_output is None or self.settings.regenerate)

    def plan(self, built: BuiltTask, benchmark: str, case: Case) -> Planned:
        """The case's request and cache key; raises ``TaskFailed`` when it cannot be rendered."""
        from ..tasks.model_task import ModelTask
        from ..tasks.output_cache import output_key

        task = built.task
        if isinstance(task, ModelTask):
            try:
                request = task.request(benchmark, case)
            except Exception as exc:  # TemplateFieldError, FewShotError: this case's own problem
                raise TaskFailed(_failure("task-request", f"{task.label}: {exc}", case)) from None
            return Planned(built, benchmark, case, output_key(task.fingerprint, request.as_dict()), request)
        given = _task_input(benchmark, case, task_sees_truth(built))
        return Planned(built, benchmark, case, output_key(task.fingerprint, _as_given(given)), None)

    def cached(self, planned: Planned) -> Produced | None:
        """The cached output of ``planned``; raises ``TaskFailed`` on a replay miss."""
        cache = self._output_cache()
        stored = cache.get(planned.key) if cache is not None else None
        if stored is not None:
            from ..cost.spending import saved_cost

            saved = saved_cost(self.price(planned), stored.input_tokens, stored.output_tokens)
            return Produced(
                stored.output,
                TASK_CACHE,
                planned.built.task.label,
                planned.built.task.fingerprint,
                stored.latency,
                stored.input_tokens,
                stored.output_tokens,
                saved=saved,
                answered=_answered(stored.answered_by),
            )
        if self.settings.task_cache == "replay":
            where = f" in {self.root / self.settings.cache_path}"
            never = (
                "--llmjudge-cache=replay never runs a task unless --llmjudge-task-cache=on is passed"
                if self.settings.cache == "replay"
                else "--llmjudge-task-cache=replay never runs a task. "
                "Record one with --llmjudge-task-cache=on"
            )
            task = planned.built.task.label
            message = f"no cached output{where} for this case from task {task}; {never}."
            raise TaskFailed(_failure("task-cache-miss", message, planned.case))
        return None

    async def produce(self, key: str, planned: Planned, slots: Slots) -> Produced:
        """Run ``planned``'s task once for the case named ``key`` (its samples share the output)."""
        running = self._running.get(key)
        if running is None:
            running = asyncio.ensure_future(self._produce(planned, slots))
            self._running[key] = running
        return await asyncio.shield(running)

    async def _produce(self, planned: Planned, slots: Slots) -> Produced:
        """Run ``planned``'s task within the task concurrency (a batched model task's call waits
        in its batch, every one in flight), its budget reserved and settled."""
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.settings.task_concurrency)
        async with contextlib.nullcontext() if self.batched(planned) else self._semaphore:
            budget = self.budget(planned)
            reservation = await budget.admit() if budget is not None else None
            if budget is not None and reservation is None:  # never cached: a rerun runs it
                raise TaskFailed(_failure(budget.kind, budget.limit.message(), planned.case))
            started = time.perf_counter()
            billed = _Billed()
            try:
                output = await self._output_of(planned, slots, billed)
            finally:
                if budget is not None and reservation is not None:
                    budget.settle(reservation, billed.used)
            latency = time.perf_counter() - started
        return self._store(planned, output, billed.usage, latency, billed.answered)

    async def _output_of(self, planned: Planned, slots: Slots, billed: _Billed) -> Any:
        """The task's output, redacted, within the task timeout; whatever goes wrong is a
        ``TaskFailed`` naming the task."""
        from ..tasks.python_task import TaskRaised
        from ..tasks.task_input import TaskOutputError, output_value

        label = planned.built.task.label
        # a batched model task's call runs past the batch wait, which ends it first as batch-pending
        timeout = self.settings.task_timeout + (self.settings.batch_wait if self.batched(planned) else 0)
        try:
            async with asyncio.timeout(timeout):
                raw = await self._call(planned, slots, billed)
                return _redacted(output_value(raw, self.settings.max_response_bytes))
        except TimeoutError:
            message = f"task {label} took longer than --llmjudge-task-timeout={self.settings.task_timeout:g}s"
            raise TaskFailed(_failure("task-timeout", message, planned.case)) from None
        except JudgeFailure as exc:
            if exc.kind != BATCH_PENDING:
                message = f"task {label} raised {type(exc).__name__}: {exc}"
                raise TaskFailed(_failure("task-error", message, planned.case)) from None
            raise TaskFailed(_failure(BATCH_PENDING, f"task {label}: {exc.message}", planned.case)) from None
        except TaskOutputError as exc:
            raise TaskFailed(_failure("task-output", f"task {label} {exc}", planned.case)) from None
        except TaskRaised as exc:  # whatever a Python task raises, SystemExit included
            message = "\n".join([f"task {label} raised {exc}", *user_frames(exc.raised, self.root)])
            raise TaskFailed(_failure("task-error", message, planned.case)) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # whatever the system under test raises is its case's ERROR
            message = f"task {label} raised {type(exc).__name__}: {exc}"
            raise TaskFailed(_failure("task-error", message, planned.case)) from None

    async def _call(self, planned: Planned, slots: Slots, billed: _Billed) -> Any:
        """The task's raw answer: a model task's (its usage priced into ``billed``), within its
        server's slots; a Python task's, given the case's input."""
        from ..tasks.model_task import ModelTask, ask_model

        task = planned.built.task
        if not isinstance(task, ModelTask):
            return await task(_task_input(planned.benchmark, planned.case, task_sees_truth(planned.built)))
        assert planned.request is not None and planned.built.model is not None
        from ..cost.spending import priced_usage
        from ..models.judges import endpoint

        model = self.model_of(planned.built.model, planned.built.base_url)
        async with slots.server(endpoint(model)):  # a local server's own slots
            raw, responses, messages = await ask_model(
                model, planned.request, task.model_settings(), task.output_schema
            )
        billed.usage = billed.used = priced_usage(self.price(planned), responses)
        from ..models.identity import answered_by

        billed.answered = answered_by(messages)
        return raw

    def batched(self, planned: Planned) -> bool:
        """Whether ``planned`` is a model task whose calls go through a batch API (``--llmjudge-batch``)."""
        if planned.built.model is None or self.settings.batch == "off":
            return False
        from ..models.batching import BatchJudgeModel

        return isinstance(self.model_of(planned.built.model, planned.built.base_url), BatchJudgeModel)

    def _store(
        self, planned: Planned, output: Any, usage: Usage, latency: float, answered: Answered | None = None
    ) -> Produced:
        """The produced output, kept in the output cache when it is on."""
        from ..tasks.output_cache import StoredOutput

        label = planned.built.task.label
        produced = Produced(
            output,
            TASK,
            label,
            planned.built.task.fingerprint,
            latency,
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens,
            usage.spent,
            answered=answered,
        )
        cache = self._output_cache()
        if cache is not None and self.settings.task_cache == "on":
            who = None if answered is None else answered.to_json()
            stored = StoredOutput(output, usage.input_tokens, usage.output_tokens, latency, who)
            cache.put(planned.key, label, planned.benchmark, planned.case.id, stored)
        return produced

    def price(self, planned: Planned) -> Price | None:
        """The price of a model task's tokens (None for a Python task, or a model without one)."""
        built = planned.built
        if built.model is None or self.spending is None:
            return None
        label = built.task.label  # its base URL in it (no model is built for a price: a local
        if label not in self._prices:  # task's server would start)
            self._prices[label] = self.spending.price(label, built.base_url)
        return self._prices[label]

    def output_history(self, benchmark: str, task: str) -> list[int]:
        """The output tokens of ``task``'s stored answers on ``benchmark``'s cases."""
        cache = self._output_cache()
        return cache.output_history(benchmark, task) if cache is not None else []

    def budget(self, planned: Planned) -> CallBudget | None:
        """What a model task's call reserves in the run's budget (None: no budget, or a Python task)."""
        spending = self.spending
        if spending is None or spending.limit is None or planned.request is None:
            return None
        from ..cost.spending import TASK_BUDGET_KIND
        from ..tasks.model_task import messages_text

        tokens = self.tokens(planned, spending)
        return spending.call_budget(tokens, messages_text(planned.request.messages), TASK_BUDGET_KIND)

    def tokens(self, planned: Planned, spending: Spending) -> ModelTokens:
        """The tokens a model task's call is projected to use: its price, its ``max_tokens`` and
        the lengths of its stored answers."""
        from ..cost.spending import DEFAULT_TASK_OUTPUT_TOKENS
        from ..tasks.model_task import ModelTask

        task = planned.built.task
        assert isinstance(task, ModelTask)
        return spending.model_tokens(
            planned.benchmark,
            task.label,
            self.price(planned),
            default_output=DEFAULT_TASK_OUTPUT_TOKENS,
            max_tokens=task.model_settings().get("max_tokens"),
            outputs=lambda: self.output_history(planned.benchmark, task.label),
        )

    def _output_cache(self) -> OutputCache | None:
        """The produced-output table, opened on first use; None with ``--llmjudge-task-cache=off``
        or a replay of a cache file that does not exist."""
        if self._cache_opened:
            return self._cache
        self._cache_opened = True
        from ..tasks.output_cache import OutputCache, OutputCacheError

        path = self.root / self.settings.cache_path
        mode = self.settings.task_cache
        if mode == "off" or (mode == "replay" and not path.is_file()):
            return None
        try:
            self._cache = OutputCache(path, read_only=mode == "replay")
        except OutputCacheError as exc:
            from ..models.judges import JudgeSetupError

            raise JudgeSetupError(f"--llmjudge-cache-path: {exc}") from None
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self.write_errors += self._cache.write_errors
            self._cache = None


def _answered(stored: dict[str, Any] | None) -> Answered | None:
    """Who answered the call that filled an output cache entry (None: not recorded)."""
    from ..models.answered import Answered

    try:
        return None if stored is None else Answered.from_json(stored)
    except TypeError:
        return None


def task_sees_truth(built: BuiltTask) -> bool:
    return built.task.sees_ground_truth


def _task_input(benchmark: str, case: Case, sees_truth: bool) -> Any:
    """What a Python task is given: copies, so that a task changing them (``inputs`` nested
    values, ``ground_truth.clear()``) never changes what the judge is told."""
    from copy import deepcopy

    from ..tasks.task_input import TaskInput

    spec = case.spec
    return TaskInput(
        case.id,
        benchmark,
        spec.source_narrative,
        deepcopy(dict(spec.inputs or {})),
        deepcopy(spec.ground_truth) if sees_truth else None,
        deepcopy(dict(spec.metadata or {})),
    )


def _redacted(value: Any) -> Any:
    """A produced output without secrets (an API key a task echoes), as reasons are redacted: it
    reaches the judge, the results file, the HTML report and the output cache."""
    from ..models.redact import redact

    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(key): _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


def _as_given(task_input: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(task_input)


def _failure(kind: str, message: str, case: Case) -> JudgeFailure:
    return JudgeFailure(kind, f"{case.location}: {message}")


def with_output(case: Case, output: Any) -> Case:
    """``case`` with its candidate output (produced by its task)."""
    from dataclasses import replace

    return replace(case, spec=case.spec.model_copy(update={"candidate_output": output}))
