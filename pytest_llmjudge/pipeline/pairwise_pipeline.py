"""Pairwise cases in the judging service: each case's output against its baseline output, asked
in both orders through the same cache, scheduler, slots and retries as single requests.

Per case: no baseline output makes it unpaired (never judged); identical outputs are a tie with
no call; otherwise each order is its own job (and cache entry) per repeated sample, settled from
the cache when the case is scheduled or judged in the background. A case whose output a task
produces runs the task first, in one job that then judges both orders.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeGuard

from ..execution.samples import SAMPLE_SEPARATOR
from ..judging.pairwise_verdict import (
    PairOutcome,
    PairwiseVerdict,
    majority_answer,
    outcome_of,
    position_consistent,
)
from ..judging.verdict import JudgeFailure, Outcome
from .host import Baseline, CaseToJudge, Host, PairToJudge
from .produce import prepare_task_start, produce_or_settle
from .settle import Ask, sample_count, send, settle_or_judge, settle_or_judge_now

if TYPE_CHECKING:
    from ..compile.pairwise import Order, PairwiseRequest
    from ..execution.scheduler import Slots
    from ..models.config import JudgeConfig
    from .task_step import Planned

__all__ = ["Baseline", "OrderAnswer", "PairResult", "PairwisePipeline", "pair_key"]


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
    def __init__(self, service: Host) -> None:
        self.service = service
        self.results: dict[str, PairResult] = {}
        self._plans: dict[str, _Plan] = {}

    def divert(self, cases: Iterable[CaseToJudge]) -> list[CaseToJudge]:
        """Schedule the pairwise cases among ``cases``; the others, for the single-request path."""
        rest: list[CaseToJudge] = []
        ready: list[tuple[PairToJudge, Any]] = []
        for case in cases:
            if not is_pair(case):
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
        baseline = case.baseline
        if baseline is None:
            self.results[case.nodeid] = PairResult(None, None)
            return _SETTLED
        output = produce_or_settle(self.service.tasks.step, case)
        candidate = case.case.spec.candidate_output
        if output is not None and output.produced is not None:
            self.service.tasks.produced[case.nodeid] = output.produced
            candidate = output.produced.output
        elif output is not None:
            if output.planned is not None:
                self._start_task(case, output.planned)
            else:
                self.results[case.nodeid] = PairResult(None, baseline, setup_failure=output.failure)
            return _SETTLED
        return _SETTLED if self._identical(case, candidate, baseline) else candidate

    def _identical(self, case: PairToJudge, output: Any, baseline: Baseline) -> bool:
        """Whether ``output`` is the baseline's: then the case is a tie, with no call."""
        from ..compile.pairwise import identical_outputs

        if not identical_outputs(output, baseline.output):
            return False
        self.results[case.nodeid] = PairResult(output, baseline, identical=True)
        return True

    def _asks(self, case: PairToJudge, output: Any, config: JudgeConfig) -> tuple[_Plan, list[Ask]]:
        """Each order's samples of ``case``, as the judge calls to settle or make."""
        from ..compile.pairwise import ORDERS
        from ..execution.jobs import judge_job
        from ..judging.pairwise_judge import judge_pair_once

        plan = _Plan(case, output, case.pair_requests(output), config.model_name)
        asks = []
        repeats = sample_count(case.benchmark, self.service.settings)
        for order, request in zip(ORDERS, plan.requests, strict=True):
            plan.keys.append([pair_key(case.nodeid, order, i) for i in range(repeats)])
            for index, key in enumerate(plan.keys[-1]):
                job = judge_job(case.benchmark.code, case.case.id, request, config, index, judge_pair_once)
                asks.append(Ask(key, job, config))
        return plan, asks

    def _start(self, ready: list[tuple[PairToJudge, Any]]) -> None:
        """Settle what the cache holds (one lookup for all); start judge calls for the rest."""
        from ..judging.pairwise_judge import judge_pair_once

        configs = [self.service.judge_config(case) for case, _ in ready]  # no judge: nothing planned
        plans: list[_Plan] = []
        asks: list[Ask] = []
        for (case, output), config in zip(ready, configs, strict=True):
            plan, own = self._asks(case, output, config)
            plans += [plan] * len(own)
            asks += own
        settled_now, pending = settle_or_judge(self.service, asks, judge_pair_once)
        for plan, ask, settled in zip(plans, asks, settled_now, strict=True):
            self._plans[plan.case.nodeid] = plan
            if settled is not None:
                plan.settled[ask.key] = settled
        send(self.service, pending)

    def _start_task(self, case: PairToJudge, planned: Planned) -> None:
        """One job: run the case's task, then judge both orders as soon as the output exists."""
        config = prepare_task_start(self.service, case, planned)
        assert config is not None  # a pairwise case is never ``code``
        key = pair_key(case.nodeid, "task", 0)
        self._plans[case.nodeid] = _Plan(case, model=config.model_name, task_key=key)
        self.service.start_jobs([(key, partial(self._run_task, case, planned, config))])

    async def _run_task(
        self, case: PairToJudge, planned: Planned, config: JudgeConfig, slots: Slots
    ) -> Outcome:
        """The task's output, then both orders judged; the case's result is kept in ``results``
        (the scheduler carries only whether it failed)."""
        from ..compile.pairwise import ORDERS
        from ..judging.pairwise_judge import judge_pair_once
        from .task_step import TaskFailed

        baseline = case.baseline
        assert baseline is not None
        try:
            produced = await self.service.tasks.step.produce(case.nodeid, planned, slots)
            self.service.tasks.produced[case.nodeid] = produced
            if self._identical(case, produced.output, baseline):
                return Outcome(None, None, "", False, 0)
            config = await self.service.tasks.served(config)
        except (TaskFailed, JudgeFailure) as exc:
            failure = exc.failure if isinstance(exc, TaskFailed) else exc
            self.results[case.nodeid] = PairResult(None, baseline, setup_failure=failure)
            return Outcome(None, failure, "", False, 0)
        plan, asks = self._asks(case, produced.output, config)
        outcomes = await asyncio.gather(
            *(settle_or_judge_now(self.service, a.job, config, judge_pair_once, slots) for a in asks)
        )
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


def is_pair(case: CaseToJudge) -> TypeGuard[PairToJudge]:
    """Whether ``case`` is a pairwise case (told apart without importing the glue's items)."""
    return bool(getattr(case, "pairwise_mode", False))


_SETTLED = object()  # a case the pipeline settled (or whose task runs first): nothing to judge now
