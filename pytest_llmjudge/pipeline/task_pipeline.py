"""Cases whose output a task produces, in the judging service: settled from the output cache when
they are scheduled, or handed to the scheduler as jobs that run the task and then judge."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..execution.projection import judge_budget
from ..execution.samples import sample_key
from ..judging.checks import checked_outcome as run_checks
from ..judging.verdict import JudgeFailure, Outcome
from .task_step import Planned, Produced, TaskFailed, TaskStep, with_output

if TYPE_CHECKING:
    from ..compile.request import CompiledRequest
    from ..cost.pricing import Price
    from ..cost.spending import Spending
    from ..execution.cache import VerdictCache
    from ..execution.scheduler import Job, Slots
    from ..models.config import JudgeConfig
    from ..models.judges import Judges
    from ..suite.files import Benchmark, Case
    from ..suite.settings import RunSettings

CaseToJudge = Any  # pipeline.service.CaseToJudge, which imports this module


class PipelineHost(Protocol):
    """What the pipeline needs of the judging service."""

    settings: RunSettings
    root: Path
    judges: Judges
    outcomes: dict[str, Outcome]

    spending: Spending

    def judge_config(self, case: CaseToJudge) -> JudgeConfig: ...
    def require_price(self, model: str, price: Price | None) -> None: ...
    def samples_of(self, case: CaseToJudge) -> int: ...
    def start_jobs(self, jobs: list[tuple[str, Job[Outcome]]]) -> None: ...
    def verdict_cache(self) -> VerdictCache | None: ...


@dataclass(frozen=True)
class ProducedCase:
    """A case with the output its task produced, and the judge request compiled for it."""

    nodeid: str
    benchmark: Benchmark
    case: Case
    request: CompiledRequest


class TaskPipeline:
    def __init__(self, service: PipelineHost) -> None:
        self.service = service
        self.step = TaskStep(service.settings, service.root, service.judges.task_model, service.spending)
        self.produced: dict[str, Produced] = {}  # node id -> the output a task produced
        self.requests: dict[str, CompiledRequest] = {}  # node id -> its judge request, recompiled
        self._server_failure: JudgeFailure | None = None  # the judge's local server did not start
        self._served_configs: dict[int, tuple[JudgeConfig, JudgeConfig]] = {}  # id -> (asked, served)

    def ready(self, cases: Iterable[CaseToJudge]) -> Iterable[CaseToJudge | None]:
        """Each case, with its output when the cache holds it; None for a case handed to the
        scheduler (its task runs first) or settled as a task ERROR."""
        for case in cases:
            built = getattr(case, "task", None)
            if built is None or not self.step.needs_task(built, case.case):
                yield case
                continue
            try:
                planned = self.step.plan(built, case.benchmark.code, case.case)
                produced = self.step.cached(planned)
            except TaskFailed as exc:
                self.service.outcomes[case.nodeid] = Outcome(None, exc.failure, "", False, 0)
                yield None
                continue
            if produced is not None:
                yield self._with(case, produced)
            else:
                self._start(case, planned)
                yield None

    def _with(self, case: CaseToJudge, produced: Produced) -> ProducedCase:
        own = with_output(case.case, produced.output)
        request: CompiledRequest = case.recompile(own)
        self.produced[case.nodeid] = produced
        self.requests[case.nodeid] = request
        return ProducedCase(case.nodeid, case.benchmark, own, request)

    def _start(self, case: CaseToJudge, planned: Planned) -> None:
        """Jobs that run the case's task, then judge each sample as soon as the output exists."""
        from ..judging.preload import load_judging

        service = self.service
        config = None
        samples = 1
        if case.benchmark.spec.evaluator_type != "code":
            config = service.judge_config(case)  # its local server starts once an output needs it
            service.require_price(config.model_name, config.price)
            samples = service.samples_of(case)
        if planned.built.model is not None:  # a local task server starts here, not on the loop
            self.step.model_of(planned.built.model, planned.built.base_url)
            service.require_price(planned.built.task.label, self.step.price(planned))
        load_judging()
        jobs: list[tuple[str, Job[Outcome]]] = [
            (sample_key(case.nodeid, index), partial(self._run, case, planned, config, index))
            for index in range(samples)
        ]
        service.start_jobs(jobs)

    async def _run(
        self, case: CaseToJudge, planned: Planned, config: JudgeConfig | None, sample: int, slots: Slots
    ) -> Outcome:
        try:
            produced = await self.step.produce(case.nodeid, planned, slots)
        except TaskFailed as exc:
            return Outcome(None, exc.failure, "", False, 0)
        view = self._with(case, produced)
        if config is not None:
            try:
                config = await self._served(config)
            except JudgeFailure as failure:
                return Outcome(None, failure, config.model_name, False, 0)
        return await self.judge_now(view, config, sample, slots)

    async def _served(self, config: JudgeConfig) -> JudgeConfig:
        """``config`` with its local judge server started: only once a produced output needs a
        judge (a run whose tasks all fail starts none), in a worker thread (a start takes
        seconds, and the loop goes on). A server that cannot start is each case's ERROR."""
        import asyncio

        from ..models.judges import JudgeSetupError

        if self._server_failure is not None:
            raise self._server_failure
        known = self._served_configs.get(id(config))
        if known is not None and known[0] is config:
            return known[1]
        try:
            served = await asyncio.to_thread(self.service.judges.with_server, config)
        except JudgeSetupError as exc:
            self._server_failure = JudgeFailure("judge-setup", str(exc))
            raise self._server_failure from None
        self._served_configs[id(config)] = (config, served)
        return served

    async def judge_now(
        self, case: CaseToJudge, config: JudgeConfig | None, sample: int, slots: Slots
    ) -> Outcome:
        """Judge one sample of a case whose output a task just produced: its checks, the verdict
        cache, then the judge (on the scheduler's loop, holding a slot only while calling)."""
        from ..execution.jobs import judge_job
        from ..execution.retries import RetryPolicy, judge_uncached, settle_from_cache

        kind = case.benchmark.spec.evaluator_type
        if kind in {"code", "hybrid"}:
            checked: Outcome = run_checks(case)
            if kind == "code" or not checked.verdict or not checked.verdict.passed:
                return checked
        assert config is not None
        job = judge_job(case, config, sample)
        cache, mode = self.service.verdict_cache(), self.service.settings.cache
        settled = settle_from_cache([job], cache, mode)[0]
        if settled is not None:
            return settled
        budget = judge_budget(self.service.spending, case.request, job.benchmark, config, cache)
        job = replace(job, budget=budget)
        policy = RetryPolicy(
            attempts=self.service.settings.attempts, timeout=config.settings.get("timeout", 60.0)
        )
        return await judge_uncached(job, slots, policy=policy, cache=cache, mode=mode)

    def close(self) -> list[str]:
        """Close the output cache; what it could not write."""
        self.step.close()
        return list(self.step.write_errors)
