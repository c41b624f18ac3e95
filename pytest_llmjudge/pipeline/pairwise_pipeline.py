"""Pairwise cases in the judging service: each case's output against its baseline output, asked
in both orders through the same cache, scheduler, slots and retries as single requests.

Per case: no baseline output makes it unpaired (never judged); identical outputs are a tie with
no call; otherwise each order is its own job (and cache entry) per repeated sample, settled from
the cache when the case is scheduled or judged in the background. A case whose output a task
produces runs the task first, in one job that then judges both orders.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..execution.projection import judge_budget
from ..execution.samples import SAMPLE_SEPARATOR
from ..judging.pairwise_verdict import (
    PairOutcome,
    PairwiseVerdict,
    majority_answer,
    outcome_of,
    position_consistent,
)
from ..judging.verdict import JudgeFailure, Outcome

if TYPE_CHECKING:
    from ..compile.pairwise import Order, PairwiseRequest
    from ..cost.pricing import Price
    from ..cost.spending import Spending
    from ..execution.cache import VerdictCache
    from ..execution.retries import CaseJob
    from ..execution.scheduler import Job, Scheduler, Slots
    from ..models.config import JudgeConfig
    from ..models.judges import Judges
    from ..suite.files import Benchmark, Case
    from ..suite.settings import RunSettings
    from ..tasks.build import BuiltTask
    from .task_pipeline import TaskPipeline
    from .task_step import Planned


@dataclass(frozen=True)
class Baseline:
    """The output a case's candidate output is compared with, and where it came from
    (``case file``: the case's ``baseline_output``; ``baseline results``: the baseline run's)."""

    output: Any
    source: str


class PairToJudge(Protocol):
    """A pairwise case as the service sees it (``glue.pairwise_items.PairwiseItem``)."""

    pairwise_mode: bool

    @property
    def nodeid(self) -> str: ...
    @property
    def benchmark(self) -> Benchmark: ...
    @property
    def case(self) -> Case: ...
    @property
    def task(self) -> BuiltTask | None: ...
    @property
    def baseline(self) -> Baseline | None: ...

    def pair_requests(self, candidate_output: Any) -> tuple[PairwiseRequest, PairwiseRequest]: ...


class PairwiseHost(Protocol):
    """What the pipeline needs of the judging service."""

    settings: RunSettings
    root: Path
    judges: Judges
    outcomes: dict[str, Outcome]
    tasks: TaskPipeline
    scheduler: Scheduler[Outcome] | None
    cache_hits: int
    spending: Spending  # prices and the run's budget

    def schedule(self, cases: Sequence[Any]) -> None: ...
    def judge_config(self, case: Any) -> JudgeConfig: ...
    def require_price(self, model: str, price: Price | None) -> None: ...
    def start_jobs(self, jobs: list[tuple[str, Job[Outcome]]]) -> None: ...
    def verdict_cache(self) -> VerdictCache | None: ...


@dataclass(frozen=True)
class OrderAnswer:
    """One order of a pairwise case: its request and each repeated sample's outcome."""

    order: Order
    request: PairwiseRequest
    samples: tuple[Outcome, ...]

    @property
    def failure(self) -> JudgeFailure | None:
        """The first sample's failure: a sample that errored errors the case."""
        return next((s.failure for s in self.samples if s.failure is not None), None)

    @property
    def answer(self) -> PairwiseVerdict | None:
        """The order's answer (the majority of its samples), None when one errored."""
        answers = [s.pairwise for s in self.samples]
        if self.failure is not None or not answers or any(a is None for a in answers):
            return None
        return majority_answer([a for a in answers if a is not None])


@dataclass(frozen=True)
class PairResult:
    """A pairwise case's end: unpaired (no baseline output), a tie of identical outputs, both
    orders' answers, or the failure that kept it from an outcome."""

    candidate_output: Any
    baseline: Baseline | None
    orders: tuple[OrderAnswer, ...] = ()  # (candidate first, baseline first) when judged
    identical: bool = False
    setup_failure: JudgeFailure | None = None  # no model, a task that failed
    model: str = ""

    @property
    def failure(self) -> JudgeFailure | None:
        if self.setup_failure is not None:
            return self.setup_failure
        return next((o.failure for o in self.orders if o.failure is not None), None)

    @property
    def unpaired(self) -> bool:
        return self.baseline is None and self.setup_failure is None

    @property
    def answers(self) -> tuple[PairwiseVerdict, PairwiseVerdict] | None:
        found = [o.answer for o in self.orders]
        if len(found) != 2 or found[0] is None or found[1] is None:
            return None
        return found[0], found[1]

    @property
    def outcome(self) -> PairOutcome | None:
        """``win``, ``loss``, ``tie`` or ``inconsistent`` for the candidate; None unpaired or errored."""
        if self.identical:
            return "tie"
        answers = self.answers
        return None if answers is None or self.failure is not None else outcome_of(*answers)

    @property
    def consistent(self) -> bool | None:
        """Whether the judge answered alike in both orders; None when it was not asked both."""
        answers = self.answers
        return None if answers is None or self.failure is not None else position_consistent(*answers)


def pair_key(nodeid: str, order: str, sample: int) -> str:
    """The name of one order's sample in the scheduler (``_SamplesOf`` keeps it with its case)."""
    return f"{nodeid}{SAMPLE_SEPARATOR}{order} {sample}"


@dataclass
class _Plan:
    case: PairToJudge
    output: Any = None
    requests: tuple[PairwiseRequest, ...] = ()
    model: str = ""
    keys: list[list[str]] = field(default_factory=list)  # per order, per sample
    settled: dict[str, Outcome] = field(default_factory=dict)  # decided by the cache
    task_key: str | None = None  # a job running the task, then both orders


class PairwisePipeline:
    def __init__(self, service: PairwiseHost) -> None:
        self.service = service
        self.results: dict[str, PairResult] = {}
        self._plans: dict[str, _Plan] = {}

    def divert(self, cases: Iterable[Any]) -> list[Any]:
        """Schedule the pairwise cases among ``cases``; the others, for the single-request path."""
        rest: list[Any] = []
        ready: list[tuple[PairToJudge, Any]] = []
        for case in cases:
            if not getattr(case, "pairwise_mode", False):
                rest.append(case)
            elif case.nodeid not in self.results and case.nodeid not in self._plans:
                output = self._settle_or_output(case)
                if output is not _SETTLED:
                    ready.append((case, output))
        if ready:
            self._start(ready)
        return rest

    def _settle_or_output(self, case: PairToJudge) -> Any:
        """The candidate output ready to judge against the baseline, or ``_SETTLED`` when the case
        was settled (unpaired, identical, its task failed) or its task runs first."""
        from ..compile.pairwise import identical_outputs
        from .task_step import TaskFailed

        baseline = case.baseline
        if baseline is None:
            self.results[case.nodeid] = PairResult(None, None)
            return _SETTLED
        output = case.case.spec.candidate_output
        step = self.service.tasks.step
        if case.task is not None and step.needs_task(case.task, case.case):
            try:
                planned = step.plan(case.task, case.benchmark.code, case.case)
                produced = step.cached(planned)
            except TaskFailed as exc:
                self.results[case.nodeid] = PairResult(None, baseline, setup_failure=exc.failure)
                return _SETTLED
            if produced is None:
                self._start_task(case, planned)
                return _SETTLED
            self.service.tasks.produced[case.nodeid] = produced
            output = produced.output
        if identical_outputs(output, baseline.output):
            self.results[case.nodeid] = PairResult(output, baseline, identical=True)
            return _SETTLED
        return output

    def _jobs(self, case: PairToJudge, output: Any, config: JudgeConfig) -> tuple[_Plan, list[CaseJob]]:
        from ..compile.pairwise import ORDERS
        from ..execution.retries import CaseJob
        from ..judging.pairwise_judge import judge_pair_once
        from ..models.judges import endpoint
        from ..suite.settings import judge_setting

        plan = _Plan(case, output, case.pair_requests(output), config.model_name)
        jobs = []
        repeats = int(judge_setting(case.benchmark, self.service.settings, "repeats"))
        for order, request in zip(ORDERS, plan.requests, strict=True):
            plan.keys.append([pair_key(case.nodeid, order, i) for i in range(repeats)])
            for index in range(repeats):
                call = partial(judge_pair_once, config=config)
                jobs.append(
                    CaseJob(
                        case.benchmark.code,
                        case.case.id,
                        request,
                        call,
                        config.model_name,
                        config.settings,
                        index,
                        endpoint=endpoint(config.model),
                        price=config.price,  # what a cache hit saved
                    )
                )
        return plan, jobs

    def _start(self, ready: list[tuple[PairToJudge, Any]]) -> None:
        """Settle what the cache holds (one lookup for all); start judge calls for the rest."""
        from ..execution.cache import CacheError
        from ..execution.retries import RetryPolicy, judge_uncached, settle_from_cache
        from ..judging.pairwise_judge import judge_pair_once
        from ..judging.preload import load_judging
        from ..models.judges import JudgeSetupError, endpoint

        configs = [self.service.judge_config(case) for case, _ in ready]  # no judge: nothing planned
        planned: list[tuple[_Plan, str, JudgeConfig]] = []
        jobs: list[CaseJob] = []
        for (case, output), config in zip(ready, configs, strict=True):
            plan, own = self._jobs(case, output, config)
            planned += [(plan, key, config) for keys in plan.keys for key in keys]
            jobs += own
        cache, mode = self.service.verdict_cache(), self.service.settings.cache
        try:
            settled_now = settle_from_cache(jobs, cache, mode)
        except CacheError as exc:
            raise JudgeSetupError(f"--llmjudge-cache-path: {exc}") from None
        for plan, _, _ in planned:
            self._plans[plan.case.nodeid] = plan
        pending: list[tuple[str, Job[Outcome]]] = []
        for (plan, key, config), job, settled in zip(planned, jobs, settled_now, strict=True):
            if settled is not None:
                plan.settled[key] = settled
                self.service.cache_hits += settled.cached
                continue
            self.service.require_price(config.model_name, config.price)  # under a USD budget
            config = self.service.judges.with_server(config)
            budget = judge_budget(self.service.spending, job.request, job.benchmark, config, cache)
            job = replace(job, call=partial(judge_pair_once, config=config), endpoint=endpoint(config.model))
            job = replace(job, budget=budget)
            policy = RetryPolicy(
                attempts=self.service.settings.attempts, timeout=config.settings.get("timeout", 60.0)
            )
            pending.append((key, partial(judge_uncached, job, policy=policy, cache=cache, mode=mode)))
        if pending:
            load_judging()
            self.service.start_jobs(pending)

    def _start_task(self, case: PairToJudge, planned: Planned) -> None:
        """One job: run the case's task, then judge both orders as soon as the output exists."""
        from ..judging.preload import load_judging

        config = self.service.judge_config(case)
        self.service.require_price(config.model_name, config.price)
        if planned.built.model is not None:
            self.service.require_price(planned.built.task.label, self.service.tasks.step.price(planned))
        config = self.service.judges.with_server(config)
        if planned.built.model is not None:  # a local task server starts here, not on the loop
            self.service.tasks.step.model_of(planned.built.model, planned.built.base_url)
        load_judging()
        key = pair_key(case.nodeid, "task", 0)
        self._plans[case.nodeid] = _Plan(case, model=config.model_name, task_key=key)
        self.service.start_jobs([(key, partial(self._run_task, case, planned, config))])

    async def _run_task(
        self, case: PairToJudge, planned: Planned, config: JudgeConfig, slots: Slots
    ) -> Outcome:
        """The task's output, then both orders judged; the case's result is kept in ``results``
        (the scheduler carries only whether it failed)."""
        from ..compile.pairwise import ORDERS, identical_outputs
        from ..execution.retries import RetryPolicy, judge_uncached, settle_from_cache
        from .task_step import TaskFailed

        baseline = case.baseline
        assert baseline is not None
        try:
            produced = await self.service.tasks.step.produce(case.nodeid, planned, slots)
        except TaskFailed as exc:
            self.results[case.nodeid] = PairResult(None, baseline, setup_failure=exc.failure)
            return Outcome(None, exc.failure, "", False, 0)
        self.service.tasks.produced[case.nodeid] = produced
        if identical_outputs(produced.output, baseline.output):
            self.results[case.nodeid] = PairResult(produced.output, baseline, identical=True)
            return Outcome(None, None, "", False, 0)
        plan, jobs = self._jobs(case, produced.output, config)
        cache, mode = self.service.verdict_cache(), self.service.settings.cache
        policy = RetryPolicy(
            attempts=self.service.settings.attempts, timeout=config.settings.get("timeout", 60.0)
        )

        async def sample(job: CaseJob) -> Outcome:
            settled = settle_from_cache([job], cache, mode)[0]
            if settled is not None:
                return settled
            budget = judge_budget(self.service.spending, job.request, job.benchmark, config, cache)
            job = replace(job, budget=budget)
            return await judge_uncached(job, slots, policy=policy, cache=cache, mode=mode)

        outcomes = list(await asyncio.gather(*(sample(job) for job in jobs)))
        repeats = len(plan.keys[0])
        orders = tuple(
            OrderAnswer(order, request, tuple(outcomes[i * repeats : (i + 1) * repeats]))
            for i, (order, request) in enumerate(zip(ORDERS, plan.requests, strict=True))
        )
        result = PairResult(produced.output, baseline, orders, model=config.model_name)
        self.results[case.nodeid] = result
        return Outcome(None, result.failure, config.model_name, False, 0)

    def result(self, case: PairToJudge) -> PairResult:
        """``case``'s result, waiting for its judge calls if they are still running."""
        nodeid = case.nodeid
        if nodeid not in self.results and nodeid not in self._plans:
            failed = self.service.outcomes.get(nodeid)  # settled as a setup error (xdist worker)
            if failed is None:
                self.service.schedule([case])
                failed = self.service.outcomes.get(nodeid)
            if failed is not None and failed.failure is not None and nodeid not in self._plans:
                return self.results.setdefault(
                    nodeid, PairResult(None, case.baseline, setup_failure=failed.failure)
                )
        if nodeid in self.results:
            return self.results[nodeid]
        plan = self._plans.pop(nodeid)
        scheduler = self.service.scheduler
        if plan.task_key is not None:
            assert scheduler is not None
            scheduler.result(plan.task_key)
            return self.results[nodeid]
        orders = []
        for order_keys, request in zip(plan.keys, plan.requests, strict=True):
            samples = []
            for key in order_keys:
                settled = plan.settled.get(key)
                if settled is None:
                    assert scheduler is not None
                    settled = scheduler.result(key)
                samples.append(settled)
            orders.append(OrderAnswer(request.order, request, tuple(samples)))
        result = PairResult(plan.output, case.baseline, tuple(orders), model=plan.model)
        self.results[nodeid] = result
        return result


_SETTLED = object()  # a case the pipeline settled (or whose task runs first): nothing to judge now
