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
from .panel import member_configs, pair_vote, panel_label, panel_or_error, too_few_answered
from .produce import prepare_task_start, produce_or_settle
from .settle import Ask, sample_count, send, settle_or_judge, settle_or_judge_now

if TYPE_CHECKING:
    from ..compile.pairwise import Order, PairwiseRequest
    from ..execution.scheduler import Slots
    from ..models.config import JudgeConfig
    from ..suite.panel_spec import Panel
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
    # a panel's case: each member's result (``orders`` holds all their orders, member by member)
    members: tuple[PairResult, ...] = ()
    panel: Panel | None = None

    @property
    def failure(self) -> JudgeFailure | None:
        if self.setup_failure is not None:
            return self.setup_failure
        if self.panel is not None:
            return self._panel_failure()
        return next((o.failure for o in self.orders if o.failure is not None), None)

    def _panel_failure(self) -> JudgeFailure | None:
        """Too few members answered: the case is an ERROR naming each member's failure."""
        assert self.panel is not None
        if self.identical or self.voted is not None:
            return None
        failed = [m for m in self.members if m.failure is not None]
        errors = [(m.model, str(m.failure)) for m in failed]
        answered = len(self.members) - len(failed)
        kind = failed[0].failure.kind if failed and failed[0].failure else "judge-error"
        return JudgeFailure(
            kind, too_few_answered(answered, len(self.members), self.panel.min_members, errors)
        )

    @property
    def voted(self) -> PairOutcome | None:
        """A panel's outcome (``panel.pair_vote``); None when too few members answered."""
        assert self.panel is not None
        found = pair_vote([m.outcome for m in self.members], self.panel.rule, self.panel.min_members)
        return found  # type: ignore[return-value]  # one of the members' outcomes, or inconsistent

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
        if self.panel is not None:
            return self.voted
        answers = self.answers
        return None if answers is None or self.failure is not None else outcome_of(*answers)

    @property
    def consistent(self) -> bool | None:
        """Whether the judge answered alike in both orders (a panel: every member that answered
        did); None when it was not asked both."""
        if self.panel is not None:
            found = [m.consistent for m in self.members if m.consistent is not None]
            return all(found) if found and self.failure is None else None
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
    panel: Panel | None = None  # a panel's case: each member's plan, or why it cannot judge
    members: list[_Plan | Outcome] = field(default_factory=list)


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

    def _judge_of(self, case: PairToJudge) -> JudgeConfig | tuple[Panel, list[JudgeConfig | Outcome]]:
        """``case``'s judge, or its panel and each member's judge; ``JudgeSetupError`` without one."""
        panel = panel_or_error(case.benchmark, self.service.settings)
        if panel is None:
            return self.service.judge_config(case)
        return panel, member_configs(self.service, case.benchmark, panel)

    def _asks(
        self, case: PairToJudge, output: Any, config: JudgeConfig, member: int | None = None
    ) -> tuple[_Plan, list[Ask]]:
        """Each order's samples of ``case``, as the judge calls to settle or make (a panel
        member's under keys of its own)."""
        from ..compile.pairwise import ORDERS
        from ..execution.jobs import judge_job
        from ..judging.pairwise_judge import judge_pair_once

        plan = _Plan(case, output, case.pair_requests(output), config.model_name)
        asks = []
        repeats = sample_count(case.benchmark, self.service.settings)
        for order, request in zip(ORDERS, plan.requests, strict=True):
            name = order if member is None else f"member {member} {order}"
            plan.keys.append([pair_key(case.nodeid, name, i) for i in range(repeats)])
            for index, key in enumerate(plan.keys[-1]):
                job = judge_job(case.benchmark.code, case.case.id, request, config, index, judge_pair_once)
                asks.append(Ask(key, job, config))
        return plan, asks

    def _plan(
        self, case: PairToJudge, output: Any, judge: JudgeConfig | tuple[Panel, list[JudgeConfig | Outcome]]
    ) -> tuple[_Plan, list[tuple[_Plan, Ask]]]:
        """``case``'s plan, and each call to settle or make with the plan (a member's) it fills."""
        if not isinstance(judge, tuple):
            plan, asks = self._asks(case, output, judge)
            return plan, [(plan, ask) for ask in asks]
        panel, configs = judge
        plan = _Plan(case, output, case.pair_requests(output), panel=panel)
        own: list[tuple[_Plan, Ask]] = []
        for index, config in enumerate(configs):
            if isinstance(config, Outcome):  # a member that cannot judge: shown as its ERROR
                plan.members.append(config)
                continue
            member, asks = self._asks(case, output, config, index)
            plan.members.append(member)
            own += [(member, ask) for ask in asks]
        return plan, own

    def _start(self, ready: list[tuple[PairToJudge, Any]]) -> None:
        """Settle what the cache holds (one lookup for all); start judge calls for the rest."""
        from ..judging.pairwise_judge import judge_pair_once

        judges = [self._judge_of(case) for case, _ in ready]  # no judge: nothing planned
        owners: list[_Plan] = []
        asks: list[Ask] = []
        for (case, output), judge in zip(ready, judges, strict=True):
            plan, own = self._plan(case, output, judge)
            self._plans[case.nodeid] = plan
            owners += [owner for owner, _ in own]
            asks += [ask for _, ask in own]
        settled_now, pending = settle_or_judge(self.service, asks, judge_pair_once)
        for owner, ask, settled in zip(owners, asks, settled_now, strict=True):
            if settled is not None:
                owner.settled[ask.key] = settled
        send(self.service, pending)

    def _start_task(self, case: PairToJudge, planned: Planned) -> None:
        """One job: run the case's task, then judge both orders as soon as the output exists."""
        panel = panel_or_error(case.benchmark, self.service.settings)
        config = prepare_task_start(self.service, case, planned, judged=panel is None)
        judge: JudgeConfig | tuple[Panel, list[JudgeConfig | Outcome]]
        if panel is None:
            assert config is not None  # a pairwise case is never ``code``
            judge = config
        else:
            judge = panel, member_configs(self.service, case.benchmark, panel)
            for member in judge[1]:
                if not isinstance(member, Outcome):
                    self.service.require_price(member.model_name, member.price)
        key = pair_key(case.nodeid, "task", 0)
        self._plans[case.nodeid] = _Plan(case, task_key=key)
        self.service.start_jobs([(key, partial(self._run_task, case, planned, judge))])

    async def _run_task(
        self,
        case: PairToJudge,
        planned: Planned,
        judge: JudgeConfig | tuple[Panel, list[JudgeConfig | Outcome]],
        slots: Slots,
    ) -> Outcome:
        """The task's output, then both orders judged (by each member of a panel); the case's
        result is kept in ``results`` (the scheduler carries only whether it failed)."""
        from .task_step import TaskFailed

        baseline = case.baseline
        assert baseline is not None
        try:
            produced = await self.service.tasks.step.produce(case.nodeid, planned, slots)
        except TaskFailed as exc:
            self.results[case.nodeid] = PairResult(None, baseline, setup_failure=exc.failure)
            return Outcome(None, exc.failure, "", False, 0)
        self.service.tasks.produced[case.nodeid] = produced
        if self._identical(case, produced.output, baseline):
            return Outcome(None, None, "", False, 0)
        if isinstance(judge, tuple):
            panel, configs = judge
            members = await asyncio.gather(
                *(self._judged_now(case, produced.output, c, i, slots) for i, c in enumerate(configs))
            )
            result = _panel_result(produced.output, baseline, tuple(members), panel)
        else:
            result = await self._judged_now(case, produced.output, judge, None, slots)
        self.results[case.nodeid] = result
        return Outcome(None, result.failure, result.model, False, 0)

    async def _judged_now(
        self, case: PairToJudge, output: Any, config: JudgeConfig | Outcome, member: int | None, slots: Slots
    ) -> PairResult:
        """Both orders of ``case`` judged by ``config`` now (inside the task's job)."""
        from ..compile.pairwise import ORDERS
        from ..judging.pairwise_judge import judge_pair_once

        if isinstance(config, Outcome):  # a panel member that cannot judge
            return PairResult(output, case.baseline, setup_failure=config.failure, model=config.model)
        try:
            config = await self.service.tasks.served(config)
        except JudgeFailure as failure:
            return PairResult(output, case.baseline, setup_failure=failure, model=config.model_name)
        plan, asks = self._asks(case, output, config, member)
        outcomes = await asyncio.gather(
            *(settle_or_judge_now(self.service, a.job, config, judge_pair_once, slots) for a in asks)
        )
        repeats = len(plan.keys[0])
        orders = tuple(
            OrderAnswer(order, request, tuple(outcomes[i * repeats : (i + 1) * repeats]))
            for i, (order, request) in enumerate(zip(ORDERS, plan.requests, strict=True))
        )
        return PairResult(output, case.baseline, orders, model=config.model_name)

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
        if plan.task_key is not None:
            assert self.service.scheduler is not None
            self.service.scheduler.result(plan.task_key)
            return self.results[nodeid]
        result = self.results[nodeid] = self._collected(plan)
        return result

    def _collected(self, plan: _Plan) -> PairResult:
        """The result of ``plan``'s calls (a panel's: each member's, then the vote), waiting for
        those still running."""
        baseline = plan.case.baseline
        if plan.panel is not None:
            members = tuple(
                self._collected(m)
                if isinstance(m, _Plan)
                else PairResult(plan.output, baseline, setup_failure=m.failure, model=m.model)
                for m in plan.members
            )
            return _panel_result(plan.output, baseline, members, plan.panel)
        scheduler = self.service.scheduler
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
        return PairResult(plan.output, baseline, tuple(orders), model=plan.model)


def _panel_result(
    output: Any, baseline: Baseline | None, members: tuple[PairResult, ...], panel: Panel
) -> PairResult:
    """A panel's pairwise case: every member's orders, its members' results and the panel."""
    label = panel_label(panel.rule, panel.min_members, [m.model for m in members])
    orders = tuple(order for member in members for order in member.orders)
    return PairResult(output, baseline, orders, model=label, members=members, panel=panel)


def is_pair(case: CaseToJudge) -> TypeGuard[PairToJudge]:
    """Whether ``case`` is a pairwise case (told apart without importing the glue's items)."""
    return bool(getattr(case, "pairwise_mode", False))


_SETTLED = object()  # a case the pipeline settled (or whose task runs first): nothing to judge now
